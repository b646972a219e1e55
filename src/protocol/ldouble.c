/* Redis computes INCRBYFLOAT/HINCRBYFLOAT in C `long double` and prints with
 * "%.17Lf" then strips trailing zeroes (util.c ld2string, LD_STR_HUMAN).
 * Rust has no long double, so the exact arithmetic lives here. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <locale.h>
#include <pthread.h>

#define MAX_LONG_DOUBLE_CHARS (5 * 1024)

/* Redis string2ld. Returns 1 and stores the value on success. */
static int string2ld(const char *s, size_t slen, long double *dp) {
    char buf[MAX_LONG_DOUBLE_CHARS];
    long double value;
    char *eptr;
    if (slen == 0 || slen >= sizeof(buf)) return 0;
    memcpy(buf, s, slen);
    buf[slen] = '\0';
    errno = 0;
    value = strtold(buf, &eptr);
    if (isspace((unsigned char)buf[0]) || eptr[0] != '\0' ||
        (size_t)(eptr - buf) != slen ||
        (errno == ERANGE && (value == HUGE_VALL || value == -HUGE_VALL || fpclassify(value) == FP_ZERO)) ||
        isnan(value))
        return 0;
    *dp = value;
    return 1;
}

/* LD_STR_HUMAN formatting. Returns the length, or -1. */
static int ld2string_human(char *buf, size_t len, long double value) {
    int l;
    if (isinf(value)) {
        if (len < 5) return -1;
        if (value > 0) { memcpy(buf, "inf", 3); l = 3; }
        else { memcpy(buf, "-inf", 4); l = 4; }
        return l;
    }
    l = snprintf(buf, len, "%.17Lf", value);
    if (l < 0 || (size_t)l + 1 > len) return -1;
    if (strchr(buf, '.') != NULL) {
        char *p = buf + l - 1;
        while (*p == '0') { p--; l--; }
        if (*p == '.') l--;
    }
    if (l == 2 && buf[0] == '-' && buf[1] == '0') { buf[0] = '0'; l = 1; }
    return l;
}

/* Parse `cur` (or 0 when cur is NULL) and `incr`, add, format into out.
 * Returns the output length, or: -1 current value not a float, -2 increment
 * not a float, -3 result NaN or infinite, -4 formatting failed. */
int neokv_incrbyfloat(const char *cur, size_t curlen, const char *incr, size_t incrlen,
                      char *out, size_t outlen) {
    long double a = 0, b = 0, r;
    if (cur != NULL && !string2ld(cur, curlen, &a)) return -1;
    if (!string2ld(incr, incrlen, &b)) return -2;
    r = a + b;
    if (isnan(r) || isinf(r)) return -3;
    int l = ld2string_human(out, outlen, r);
    return l < 0 ? -4 : l;
}

/* "%.17g", as Redis prints doubles (scores, RESP2 bulk doubles). */
int neokv_fmt_g17(double v, char *out, size_t outlen) {
    return snprintf(out, outlen, "%.17g", v);
}

/* A NUL-terminated copy of s[0..len] (Redis's arguments are sds strings). */
static char *cstr(const char *s, size_t len) {
    char *b = malloc(len + 1);
    if (b == NULL) return NULL;
    memcpy(b, s, len);
    b[len] = '\0';
    return b;
}

/* Redis string2d (scores, weights): strtod over the whole string, no leading
 * space, no overflow or underflow to zero, no NaN. Returns 1 on success. */
int neokv_string2d(const char *s, size_t len, double *dp) {
    char *b = cstr(s, len), *eptr;
    double v;
    int ok;
    if (b == NULL) return 0;
    errno = 0;
    v = strtod(b, &eptr);
    ok = !(len == 0 || isspace((unsigned char)b[0]) || (size_t)(eptr - b) != len ||
           (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || fpclassify(v) == FP_ZERO)) || isnan(v));
    free(b);
    if (ok) *dp = v;
    return ok;
}

/* A score range bound as Redis's zslParseRange reads it: plain strtod up to
 * the string's end (leading space, the empty string, overflow all accepted),
 * NaN refused. Returns 1 on success. */
int neokv_strtod_bound(const char *s, size_t len, double *dp) {
    char *b = cstr(s, len), *eptr;
    double v;
    int ok;
    if (b == NULL) return 0;
    v = strtod(b, &eptr);
    ok = eptr[0] == '\0' && !isnan(v);
    free(b);
    if (ok) *dp = v;
    return ok;
}

/* A blocking timeout in seconds as Redis reads it (string2ld, then the
 * milliseconds as a long long; x86-64 turns an out-of-range conversion into
 * LLONG_MIN, which Redis then calls negative; a positive timeout under a
 * millisecond is one millisecond, as redis-server 7.0.15 answers it, never 0,
 * which would mean "forever"). Returns 1 on success. */
int neokv_timeout_ms(const char *s, size_t len, long long *ms) {
    long double v, t;
    if (!string2ld(s, len, &v)) return 0;
    t = v * 1000.0L;
    if (t > 0 && t < 1.0L)
        *ms = 1;
    else if (t >= -9223372036854775808.0L && t < 9223372036854775808.0L)
        *ms = (long long)t;
    else
        *ms = (-9223372036854775807LL - 1);
    return 1;
}

/* A SORT weight as Redis's sortCommand reads it: C strtod of the value as a C
 * string (so it ends at a NUL byte), which must reach that end; overflow,
 * underflow (ERANGE) and NaN are refused, a leading space and the empty string
 * (0) are not. Returns 1 on success. */
int neokv_strtod_sort(const char *s, size_t len, double *dp) {
    char *b = cstr(s, len), *eptr;
    double v;
    int ok;
    if (b == NULL) return 0;
    errno = 0;
    v = strtod(b, &eptr);
    ok = eptr[0] == '\0' && errno != ERANGE && !isnan(v);
    free(b);
    if (ok) *dp = v;
    return ok;
}

/* The environment's collation (LC_ALL / LC_COLLATE / LANG), as redis-server
 * sets it at start; made once, used through strcoll_l so that nothing else in
 * the process (Lua's string comparison, which must be the same on every
 * replica) changes with it. */
static locale_t collation;
static pthread_once_t collation_once = PTHREAD_ONCE_INIT;

static void make_collation(void) {
    collation = newlocale(LC_COLLATE_MASK, "", (locale_t)0);
    if (collation == (locale_t)0) collation = newlocale(LC_COLLATE_MASK, "C", (locale_t)0);
}

/* strcoll of two values as C strings (each ends at its first NUL byte), as
 * Redis's SORT ALPHA compares them under the environment's LC_COLLATE. */
int neokv_strcoll(const char *a, size_t alen, const char *b, size_t blen) {
    char *x, *y;
    int r = 0;
    pthread_once(&collation_once, make_collation);
    /* C strings: only the bytes before the first NUL count. */
    const char *na = memchr(a, 0, alen), *nb = memchr(b, 0, blen);
    if (na != NULL) alen = (size_t)(na - a);
    if (nb != NULL) blen = (size_t)(nb - b);
    x = cstr(a, alen);
    y = cstr(b, blen);
    if (x != NULL && y != NULL) r = collation ? strcoll_l(x, y, collation) : strcmp(x, y);
    free(x);
    free(y);
    return r;
}
