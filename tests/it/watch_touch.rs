//! WATCH exactness command by command, against redis-server 7.0: for every
//! write command of Redis 7.0's families (and some reads), the forms that
//! change a key and the no-op forms that write nothing, each run the same way
//! on NeoKV and on a real redis-server. EXEC must abort on NeoKV exactly when
//! it does on Redis, which counts a key as changed when the command calls
//! `signalModifiedKey` on it (a SETBIT that leaves the bit as it was does not,
//! an LTRIM that keeps the whole list does, XSETID and the consumer group
//! commands never do), and each change must reply the same on both. Every key
//! of a case shares the hash tag `{t}`, so a case stays in one region however
//! many regions NeoKV runs.

use crate::common::{Oracle, Raw, Server};

/// The cases, one a string: `outcome | setup | watched key | change`.
///
/// After FLUSHALL, one client runs the setup, another WATCHes the key, the
/// first runs the change, and the watcher runs MULTI, PING, EXEC. `outcome` is
/// what redis-server 7.0.15 does: `touch`, the change counts as a modification
/// of the watched key (EXEC aborts), or `none` (EXEC runs). Setup and change
/// are commands separated by `;`, their arguments by spaces: `''` is an empty
/// argument, and `@key` the DUMP payload of `key`, taken on the same server
/// just before the command.
const CASES: &[&str] = &[
    // string: SET and its flags
    "touch | | {t}k | SET {t}k v",
    "touch | SET {t}k v | {t}k | SET {t}k v",
    "touch | RPUSH {t}k a | {t}k | SET {t}k v",
    "none  | SET {t}k v | {t}k | SET {t}k w NX",
    "touch | | {t}k | SET {t}k v NX",
    "none  | | {t}k | SET {t}k v XX",
    "touch | SET {t}k v | {t}k | SET {t}k w XX",
    "touch | SET {t}k v | {t}k | SET {t}k v GET",
    "none  | SET {t}k v | {t}k | SET {t}k w NX GET",
    "none  | | {t}k | SET {t}k v XX GET",
    "touch | SET {t}k v EX 100 | {t}k | SET {t}k v KEEPTTL",
    "touch | SET {t}k v | {t}k | SET {t}k v EX 100",
    "touch | SET {t}k v | {t}k | SET {t}k v PXAT 1",
    "none  | SET {t}k v | {t}k | SET {t}k v EX 0",
    "none  | SET {t}k v | {t}k | SET {t}o v",
    "none  | SET {t}k v | {t}k | SELECT 1 ; SET {t}k v ; SELECT 0",
    "none  | SET {t}k v | {t}k | SETNX {t}k w",
    "touch | | {t}k | SETNX {t}k w",
    "touch | SET {t}k v | {t}k | SETEX {t}k 100 v",
    "touch | SET {t}k v | {t}k | PSETEX {t}k 100000 v",
    "none  | SET {t}k v | {t}k | SETEX {t}k 0 v",
    "touch | SET {t}k v | {t}k | MSET {t}o 1 {t}k v",
    "none  | SET {t}k v | {t}k | MSET {t}o 1 {t}p 2",
    "none  | SET {t}o v | {t}k | MSETNX {t}k 1 {t}o 2",
    "touch | | {t}k | MSETNX {t}k 1 {t}o 2",
    "none  | SET {t}k v | {t}k | MSETNX {t}k 1",
    "touch | SET {t}k v | {t}k | GETSET {t}k v",
    "touch | | {t}k | GETSET {t}k v",
    "none  | RPUSH {t}k a | {t}k | GETSET {t}k v",
    "none  | | {t}k | GETDEL {t}k",
    "touch | SET {t}k v | {t}k | GETDEL {t}k",
    "none  | SET {t}k v | {t}k | GETEX {t}k",
    "none  | SET {t}k v EX 100 | {t}k | GETEX {t}k",
    "none  | SET {t}k v | {t}k | GETEX {t}k PERSIST",
    "touch | SET {t}k v EX 100 | {t}k | GETEX {t}k PERSIST",
    "touch | SET {t}k v | {t}k | GETEX {t}k EX 100",
    "touch | SET {t}k v EX 100 | {t}k | GETEX {t}k EX 100",
    "touch | SET {t}k v | {t}k | GETEX {t}k PXAT 1",
    "none  | | {t}k | GETEX {t}k EX 100",
    "none  | SET {t}k v | {t}k | GET {t}k ; STRLEN {t}k ; GETRANGE {t}k 0 -1 ; MGET {t}k {t}o ; LCS {t}k {t}o",
    "touch | | {t}k | SET {t}k v KEEPTTL",
    "touch | | {t}k | SET {t}k v GET",
    // string: APPEND, SETRANGE, counters
    "touch | SET {t}k v | {t}k | APPEND {t}k ''",
    "touch | | {t}k | APPEND {t}k ''",
    "touch | SET {t}k v | {t}k | APPEND {t}k w",
    "none  | RPUSH {t}k a | {t}k | APPEND {t}k w",
    "none  | SET {t}k v | {t}k | SETRANGE {t}k 0 ''",
    "none  | SET {t}k v | {t}k | SETRANGE {t}k 5 ''",
    "none  | | {t}k | SETRANGE {t}k 3 ''",
    "touch | SET {t}k v | {t}k | SETRANGE {t}k 0 v",
    "touch | | {t}k | SETRANGE {t}k 2 a",
    "touch | SET {t}k 5 | {t}k | INCR {t}k",
    "touch | SET {t}k 5 | {t}k | DECR {t}k",
    "touch | SET {t}k 5 | {t}k | INCRBY {t}k 0",
    "touch | SET {t}k 5 | {t}k | DECRBY {t}k 0",
    "touch | | {t}k | INCRBY {t}k 0",
    "touch | SET {t}k 5 | {t}k | INCRBYFLOAT {t}k 0",
    "none  | SET {t}k x | {t}k | INCR {t}k",
    "none  | SET {t}k 5 | {t}k | INCRBYFLOAT {t}k x",
    "touch | SET {t}k v | {t}k | GETEX {t}k PX 100000",
    "touch | SET {t}k v | {t}k | GETEX {t}k EXAT 4102444800",
    "none  | RPUSH {t}k a | {t}k | GETEX {t}k EX 100",
    "none  | RPUSH {t}k a | {t}k | SET {t}k v GET",
    "touch | SET {t}k v ; SET {t}o w | {t}k | MSET {t}k v {t}o w",
    "touch | | {t}k | INCRBYFLOAT {t}k 1.5",
    "touch | SET {t}k 1.5 | {t}k | INCRBYFLOAT {t}k -0",
    "none  | SET {t}k 9223372036854775807 | {t}k | INCR {t}k",
    "touch | SETRANGE {t}k 20000 x | {t}k | SETRANGE {t}k 20000 x",
    "touch | SETRANGE {t}k 20000 x | {t}k | SETRANGE {t}k 5 y",
    "touch | SETRANGE {t}k 20000 x | {t}k | APPEND {t}k ''",
    "none  | SETRANGE {t}k 20000 x | {t}k | SETRANGE {t}k 5 ''",
    "none  | SETRANGE {t}k 20000 x | {t}k | STRLEN {t}k ; GETRANGE {t}k 19999 -1",
    // bitmap
    "none  | SETBIT {t}k 3 1 | {t}k | SETBIT {t}k 3 1",
    "none  | SETBIT {t}k 3 1 | {t}k | SETBIT {t}k 2 0",
    "touch | SETBIT {t}k 3 1 | {t}k | SETBIT {t}k 3 0",
    "touch | SETBIT {t}k 3 1 | {t}k | SETBIT {t}k 2 1",
    "touch | | {t}k | SETBIT {t}k 3 0",
    "touch | SETBIT {t}k 3 1 | {t}k | SETBIT {t}k 100 0",
    "touch | SET {t}k '' | {t}k | SETBIT {t}k 0 0",
    "none  | RPUSH {t}k a | {t}k | SETBIT {t}k 0 1",
    "none  | SET {t}k a | {t}k | SETBIT {t}k 0 2",
    "none  | SET {t}k a | {t}k | BITFIELD {t}k SET u8 0 97",
    "touch | SET {t}k a | {t}k | BITFIELD {t}k SET u8 0 98",
    "none  | SET {t}k a | {t}k | BITFIELD {t}k INCRBY u8 0 0",
    "none  | SET {t}k a | {t}k | BITFIELD {t}k GET u8 0",
    "none  | SET {t}k a | {t}k | BITFIELD {t}k OVERFLOW FAIL INCRBY u8 0 200",
    "touch | SET {t}k a | {t}k | BITFIELD {t}k OVERFLOW SAT INCRBY u8 0 200",
    "none  | | {t}k | BITFIELD {t}k GET u8 0",
    "touch | | {t}k | BITFIELD {t}k SET u8 0 0",
    "touch | SET {t}k a | {t}k | BITFIELD {t}k SET u8 100 0",
    "none  | SET {t}k a | {t}k | BITFIELD_RO {t}k GET u8 0",
    "touch | SET {t}s a | {t}d | BITOP AND {t}d {t}s",
    "none  | SET {t}s a | {t}s | BITOP AND {t}d {t}s",
    "touch | SET {t}s a ; SET {t}d a | {t}d | BITOP OR {t}d {t}s",
    "touch | SET {t}s a | {t}d | BITOP NOT {t}d {t}s",
    "none  | | {t}d | BITOP AND {t}d {t}s",
    "none  | | {t}d | BITOP XOR {t}d {t}s {t}o",
    "touch | SET {t}d x | {t}d | BITOP AND {t}d {t}s",
    "touch | SET {t}s a ; SET {t}o '' | {t}d | BITOP AND {t}d {t}s {t}o",
    "none  | SETBIT {t}k 3 1 | {t}k | BITCOUNT {t}k ; BITPOS {t}k 1 ; GETBIT {t}k 3",
    "none  | SET {t}k a | {t}k | BITFIELD {t}k INCRBY u8 0 256",
    "touch | SET {t}k a | {t}k | BITFIELD {t}k SET u8 0 97 SET u8 0 98",
    "touch | SET {t}k a | {t}k | BITFIELD {t}k SET u8 0 98 SET u8 0 97",
    "none  | SET {t}k a | {t}k | BITFIELD {t}k OVERFLOW FAIL SET u8 0 300",
    "touch | SET {t}k a | {t}k | BITFIELD {t}k SET u8 8 0",
    "none  | SET {t}k a | {t}k | BITFIELD {t}k SET i8 0 97 GET u4 0",
    "none  | SET {t}k a | {t}k | BITFIELD {t}k SET u8 #0 97",
    "none  | SETRANGE {t}k 20000 x | {t}k | SETBIT {t}k 8 0",
    "touch | SETRANGE {t}k 20000 x | {t}k | SETBIT {t}k 8 1",
    "none  | SETRANGE {t}k 20000 x | {t}k | BITFIELD {t}k SET u8 16 0",
    "touch | SETRANGE {t}k 20000 x | {t}k | BITFIELD {t}k SET u8 16 1",
    "none  | | {t}k | BITFIELD {t}k OVERFLOW FAIL INCRBY u8 0 300",
    "none  | SET {t}k a | {t}k | BITFIELD {t}k OVERFLOW FAIL INCRBY u8 8 300",
    // list
    "touch | | {t}k | LPUSH {t}k a",
    "touch | RPUSH {t}k a | {t}k | RPUSH {t}k a",
    "none  | | {t}k | LPUSHX {t}k a",
    "none  | | {t}k | RPUSHX {t}k a b",
    "touch | RPUSH {t}k a | {t}k | LPUSHX {t}k b",
    "touch | RPUSH {t}k a | {t}k | RPUSHX {t}k b",
    "none  | SET {t}k v | {t}k | LPUSH {t}k a",
    "none  | | {t}k | LPOP {t}k",
    "none  | | {t}k | RPOP {t}k 2",
    "touch | RPUSH {t}k a b | {t}k | LPOP {t}k",
    "touch | RPUSH {t}k a | {t}k | RPOP {t}k",
    "none  | RPUSH {t}k a b | {t}k | LPOP {t}k 0",
    "touch | RPUSH {t}k a b | {t}k | RPOP {t}k 5",
    "none  | | {t}k | LMPOP 1 {t}k LEFT",
    "touch | RPUSH {t}k a b | {t}k | LMPOP 2 {t}o {t}k RIGHT COUNT 1",
    "none  | RPUSH {t}k a ; RPUSH {t}o b | {t}o | LMPOP 2 {t}k {t}o LEFT",
    "touch | RPUSH {t}k a b | {t}k | BLPOP {t}k 0",
    "touch | RPUSH {t}k a b | {t}k | BRPOP {t}o {t}k 0",
    "none  | RPUSH {t}k a ; RPUSH {t}o b | {t}o | BLPOP {t}k {t}o 0",
    "touch | RPUSH {t}k a b | {t}k | BLMPOP 0 1 {t}k LEFT COUNT 5",
    "touch | RPUSH {t}k a b | {t}k | LSET {t}k 0 a",
    "none  | RPUSH {t}k a b | {t}k | LSET {t}k 5 a",
    "none  | | {t}k | LSET {t}k 0 a",
    "touch | RPUSH {t}k a b | {t}k | LINSERT {t}k BEFORE b x",
    "none  | RPUSH {t}k a b | {t}k | LINSERT {t}k AFTER z x",
    "none  | | {t}k | LINSERT {t}k AFTER z x",
    "none  | RPUSH {t}k a b | {t}k | LREM {t}k 0 z",
    "touch | RPUSH {t}k a b a | {t}k | LREM {t}k -1 a",
    "touch | RPUSH {t}k a | {t}k | LREM {t}k 0 a",
    "none  | | {t}k | LREM {t}k 0 a",
    "touch | RPUSH {t}k a b | {t}k | LTRIM {t}k 0 -1",
    "touch | RPUSH {t}k a b | {t}k | LTRIM {t}k 0 100",
    "touch | RPUSH {t}k a b | {t}k | LTRIM {t}k 1 -1",
    "touch | RPUSH {t}k a b | {t}k | LTRIM {t}k 5 10",
    "none  | | {t}k | LTRIM {t}k 0 -1",
    "touch | RPUSH {t}k a b | {t}k | LMOVE {t}k {t}d LEFT RIGHT",
    "touch | RPUSH {t}k a b | {t}d | LMOVE {t}k {t}d LEFT RIGHT",
    "touch | RPUSH {t}k a | {t}k | LMOVE {t}k {t}k LEFT RIGHT",
    "touch | RPUSH {t}k a b | {t}k | LMOVE {t}k {t}k RIGHT RIGHT",
    "none  | | {t}d | LMOVE {t}k {t}d LEFT RIGHT",
    "none  | RPUSH {t}d x | {t}d | LMOVE {t}k {t}d LEFT RIGHT",
    "none  | RPUSH {t}k a ; SET {t}d v | {t}k | LMOVE {t}k {t}d LEFT RIGHT",
    "touch | RPUSH {t}k a b | {t}d | RPOPLPUSH {t}k {t}d",
    "touch | RPUSH {t}k a b | {t}k | BRPOPLPUSH {t}k {t}d 0",
    "touch | RPUSH {t}k a b | {t}d | BLMOVE {t}k {t}d RIGHT LEFT 0",
    "none  | RPUSH {t}k a b | {t}k | LPOS {t}k b ; LINDEX {t}k 0 ; LRANGE {t}k 0 -1 ; LLEN {t}k",
    "none  | RPUSH {t}k a b | {t}k | RPOP {t}k 0",
    "touch | RPUSH {t}k a | {t}k | RPOPLPUSH {t}k {t}k",
    "touch | RPUSH {t}k a b | {t}k | BLMOVE {t}k {t}k LEFT LEFT 0",
    "touch | RPUSH {t}k a b ; RPUSH {t}d c | {t}d | LMOVE {t}k {t}d RIGHT LEFT",
    "touch | RPUSH {t}k a b | {t}k | LSET {t}k -1 b",
    "touch | RPUSH {t}k a | {t}k | LPUSH {t}k a b c",
    "none  | SET {t}k v | {t}k | LINSERT {t}k BEFORE a x",
    "none  | | {t}k | RPUSHX {t}k a b c",
    "none  | RPUSH {t}k a | {t}k | LTRIM {t}k x 1",
    "none  | | {t}d | RPOPLPUSH {t}k {t}d",
    "none  | SET {t}k v | {t}k | LPUSHX {t}k a",
    // set
    "touch | | {t}k | SADD {t}k a",
    "touch | SADD {t}k a | {t}k | SADD {t}k a b",
    "none  | SADD {t}k a | {t}k | SADD {t}k a",
    "none  | SADD {t}k a | {t}k | SADD {t}k a a",
    "none  | SADD {t}k a b | {t}k | SREM {t}k z",
    "none  | | {t}k | SREM {t}k a",
    "touch | SADD {t}k a b | {t}k | SREM {t}k a z",
    "touch | SADD {t}k a | {t}k | SREM {t}k a",
    "none  | SADD {t}k a ; SADD {t}d b | {t}k | SMOVE {t}k {t}d z",
    "none  | SADD {t}k a ; SADD {t}d b | {t}d | SMOVE {t}k {t}d z",
    "touch | SADD {t}k a b ; SADD {t}d c | {t}k | SMOVE {t}k {t}d a",
    "touch | SADD {t}k a b ; SADD {t}d c | {t}d | SMOVE {t}k {t}d a",
    "touch | SADD {t}k a b ; SADD {t}d a | {t}k | SMOVE {t}k {t}d a",
    "none  | SADD {t}k a b ; SADD {t}d a | {t}d | SMOVE {t}k {t}d a",
    "none  | SADD {t}k a b | {t}k | SMOVE {t}k {t}k a",
    "touch | SADD {t}k a | {t}d | SMOVE {t}k {t}d a",
    "touch | SADD {t}k a | {t}k | SMOVE {t}k {t}d a",
    "none  | SADD {t}k a ; SET {t}d v | {t}k | SMOVE {t}k {t}d a",
    "none  | | {t}k | SPOP {t}k",
    "touch | SADD {t}k a | {t}k | SPOP {t}k",
    "touch | SADD {t}k a | {t}k | SPOP {t}k 5",
    "none  | SADD {t}k a | {t}k | SPOP {t}k 0",
    "touch | SADD {t}s a b ; SADD {t}o b c | {t}d | SINTERSTORE {t}d {t}s {t}o",
    "none  | SADD {t}s a b ; SADD {t}o b c | {t}s | SINTERSTORE {t}d {t}s {t}o",
    "none  | SADD {t}s a ; SADD {t}o b | {t}d | SINTERSTORE {t}d {t}s {t}o",
    "touch | SADD {t}s a ; SADD {t}o b ; SADD {t}d x | {t}d | SINTERSTORE {t}d {t}s {t}o",
    "none  | SADD {t}s a | {t}d | SINTERSTORE {t}d {t}s {t}o",
    "touch | SET {t}d x | {t}d | SINTERSTORE {t}d {t}s",
    "touch | SADD {t}s a | {t}s | SINTERSTORE {t}s {t}s",
    "touch | SADD {t}s a ; SADD {t}d a | {t}d | SUNIONSTORE {t}d {t}s",
    "none  | | {t}d | SUNIONSTORE {t}d {t}s",
    "touch | SADD {t}d a | {t}d | SUNIONSTORE {t}d {t}s",
    "touch | SADD {t}s a b ; SADD {t}o b | {t}d | SDIFFSTORE {t}d {t}s {t}o",
    "none  | SADD {t}s a ; SADD {t}o a | {t}d | SDIFFSTORE {t}d {t}s {t}o",
    "touch | SADD {t}s a ; SADD {t}o a ; SET {t}d v | {t}d | SDIFFSTORE {t}d {t}s {t}o",
    "none  | SADD {t}k a b | {t}k | SISMEMBER {t}k a ; SMISMEMBER {t}k a z ; SCARD {t}k ; \
     SINTERCARD 1 {t}k ; SRANDMEMBER {t}k 0",
    "touch | SADD {t}k a ; SADD {t}d a | {t}k | SMOVE {t}k {t}d a",
    "none  | SADD {t}k a ; SADD {t}d a | {t}d | SMOVE {t}k {t}d a",
    "none  | | {t}d | SMOVE {t}k {t}d a",
    "touch | SADD {t}k a | {t}k | SPOP {t}k 1",
    "none  | SET {t}k v | {t}k | SADD {t}k a",
    "touch | SADD {t}s a ; SADD {t}d a | {t}d | SINTERSTORE {t}d {t}s",
    "touch | SADD {t}s a ; SADD {t}d a | {t}d | SDIFFSTORE {t}d {t}s",
    "touch | SADD {t}d a | {t}d | SUNIONSTORE {t}d {t}d",
    "touch | SADD {t}d a b ; SADD {t}o b | {t}d | SDIFFSTORE {t}d {t}d {t}o",
    // sorted set
    "touch | | {t}k | ZADD {t}k 1 a",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k 1 a",
    "touch | ZADD {t}k 1 a | {t}k | ZADD {t}k 2 a",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k CH 1 a",
    "touch | ZADD {t}k 1 a | {t}k | ZADD {t}k 1 a 2 b",
    "touch | ZADD {t}k 1 a | {t}k | ZADD {t}k 0 a 1 a",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k NX 2 a",
    "touch | ZADD {t}k 1 a | {t}k | ZADD {t}k NX 2 b",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k XX 2 b",
    "touch | ZADD {t}k 1 a | {t}k | ZADD {t}k XX 2 a",
    "none  | | {t}k | ZADD {t}k XX 1 a",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k GT 0 a",
    "touch | ZADD {t}k 1 a | {t}k | ZADD {t}k GT 2 a",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k LT 2 a",
    "touch | ZADD {t}k 1 a | {t}k | ZADD {t}k LT 0 a",
    "touch | ZADD {t}k 1 a | {t}k | ZADD {t}k GT 0 b",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k INCR 0 a",
    "touch | ZADD {t}k 1 a | {t}k | ZADD {t}k INCR 1 a",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k XX INCR 1 b",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k GT INCR -1 a",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k 1 a 2",
    "none  | ZADD {t}k 1 a | {t}k | ZINCRBY {t}k 0 a",
    "touch | ZADD {t}k 1 a | {t}k | ZINCRBY {t}k 1 a",
    "touch | | {t}k | ZINCRBY {t}k 0 a",
    "none  | ZADD {t}k 1 a 2 b | {t}k | ZREM {t}k z",
    "touch | ZADD {t}k 1 a 2 b | {t}k | ZREM {t}k a z",
    "touch | ZADD {t}k 1 a | {t}k | ZREM {t}k a",
    "none  | | {t}k | ZREM {t}k a",
    "none  | ZADD {t}k 1 a 2 b | {t}k | ZREMRANGEBYSCORE {t}k 5 10",
    "touch | ZADD {t}k 1 a 2 b | {t}k | ZREMRANGEBYSCORE {t}k 1 1",
    "none  | ZADD {t}k 1 a 2 b | {t}k | ZREMRANGEBYRANK {t}k 5 10",
    "touch | ZADD {t}k 1 a 2 b | {t}k | ZREMRANGEBYRANK {t}k 0 -1",
    "none  | ZADD {t}k 0 a 0 b | {t}k | ZREMRANGEBYLEX {t}k [x [z",
    "touch | ZADD {t}k 0 a 0 b | {t}k | ZREMRANGEBYLEX {t}k - [a",
    "none  | | {t}k | ZREMRANGEBYRANK {t}k 0 -1",
    "none  | | {t}k | ZPOPMIN {t}k",
    "touch | ZADD {t}k 1 a 2 b | {t}k | ZPOPMIN {t}k",
    "touch | ZADD {t}k 1 a 2 b | {t}k | ZPOPMAX {t}k 5",
    "none  | ZADD {t}k 1 a | {t}k | ZPOPMIN {t}k 0",
    "touch | ZADD {t}k 1 a 2 b | {t}k | BZPOPMIN {t}k 0",
    "touch | ZADD {t}k 1 a 2 b | {t}k | BZPOPMAX {t}o {t}k 0",
    "touch | ZADD {t}k 1 a 2 b | {t}k | ZMPOP 1 {t}k MIN",
    "none  | | {t}k | ZMPOP 1 {t}k MAX",
    "none  | ZADD {t}k 1 a ; ZADD {t}o 1 b | {t}o | ZMPOP 2 {t}k {t}o MIN",
    "touch | ZADD {t}k 1 a 2 b | {t}k | BZMPOP 0 1 {t}k MAX COUNT 2",
    "touch | ZADD {t}s 1 a 2 b | {t}d | ZRANGESTORE {t}d {t}s 0 -1",
    "none  | ZADD {t}s 1 a 2 b | {t}s | ZRANGESTORE {t}d {t}s 0 -1",
    "none  | ZADD {t}s 1 a | {t}d | ZRANGESTORE {t}d {t}s 5 10",
    "touch | ZADD {t}s 1 a ; ZADD {t}d 1 x | {t}d | ZRANGESTORE {t}d {t}s 5 10",
    "none  | | {t}d | ZRANGESTORE {t}d {t}s 0 -1",
    "touch | ZADD {t}d 1 x | {t}d | ZRANGESTORE {t}d {t}s 0 -1",
    "touch | ZADD {t}s 1 a ; ZADD {t}d 1 a | {t}d | ZRANGESTORE {t}d {t}s 0 -1",
    "touch | ZADD {t}s 1 a | {t}d | ZUNIONSTORE {t}d 1 {t}s",
    "none  | | {t}d | ZUNIONSTORE {t}d 1 {t}s",
    "touch | ZADD {t}d 1 x | {t}d | ZUNIONSTORE {t}d 1 {t}s",
    "touch | ZADD {t}s 1 a ; ZADD {t}o 1 a | {t}d | ZINTERSTORE {t}d 2 {t}s {t}o",
    "none  | ZADD {t}s 1 a ; ZADD {t}o 1 b | {t}d | ZINTERSTORE {t}d 2 {t}s {t}o",
    "touch | ZADD {t}s 1 a ; ZADD {t}o 1 b ; ZADD {t}d 1 x | {t}d | ZINTERSTORE {t}d 2 {t}s {t}o",
    "none  | ZADD {t}s 1 a ; ZADD {t}o 1 a | {t}s | ZINTERSTORE {t}d 2 {t}s {t}o",
    "touch | ZADD {t}s 1 a 2 b ; ZADD {t}o 1 a | {t}d | ZDIFFSTORE {t}d 2 {t}s {t}o",
    "none  | ZADD {t}s 1 a ; ZADD {t}o 1 a | {t}d | ZDIFFSTORE {t}d 2 {t}s {t}o",
    "none  | ZADD {t}k 1 a 2 b | {t}k | ZRANGE {t}k 0 -1 ; ZSCORE {t}k a ; ZRANK {t}k b ; ZCARD {t}k ; \
     ZCOUNT {t}k 0 5 ; ZINTERCARD 1 {t}k ; ZUNION 1 {t}k",
    "none  | ZADD {t}k 0 a | {t}k | ZADD {t}k -0 a",
    "none  | ZADD {t}k -0 a | {t}k | ZADD {t}k 0 a",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k 1.0 a",
    "none  | ZADD {t}k inf a | {t}k | ZADD {t}k +inf a",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k nan a",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k NX INCR 1 a",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k GT CH 1 a",
    "none  | ZADD {t}k 1 a | {t}k | ZADD {t}k NX GT 1 a",
    "none  | ZADD {t}k 0 a | {t}k | ZINCRBY {t}k -0 a",
    "none  | ZADD {t}k inf a | {t}k | ZINCRBY {t}k 1 a",
    "none  | ZADD {t}k inf a | {t}k | ZINCRBY {t}k -inf a",
    "none  | | {t}k | ZREMRANGEBYSCORE {t}k -inf +inf",
    "none  | | {t}k | ZREMRANGEBYLEX {t}k - +",
    "none  | | {t}k | ZPOPMAX {t}k 3",
    "touch | ZADD {t}k 1 a 2 b | {t}k | ZMPOP 1 {t}k MAX COUNT 10",
    "touch | ZADD {t}s 1 a 2 b 3 c | {t}d | ZRANGESTORE {t}d {t}s 2 (1 BYSCORE REV LIMIT 0 1",
    "none  | ZADD {t}s 1 a 2 b 3 c | {t}d | ZRANGESTORE {t}d {t}s 5 9 BYSCORE",
    "touch | ZADD {t}s 1 a ; ZADD {t}o 2 a | {t}d | ZUNIONSTORE {t}d 2 {t}s {t}o WEIGHTS 1 2 AGGREGATE MAX",
    "touch | ZADD {t}d 1 x | {t}d | ZINTERSTORE {t}d 2 {t}s {t}o",
    "touch | ZADD {t}d 1 x | {t}d | ZDIFFSTORE {t}d 1 {t}s",
    "touch | ZADD {t}s 1 a ; ZADD {t}d 1 a | {t}d | ZUNIONSTORE {t}d 1 {t}s",
    "touch | | {t}k | ZADD {t}k INCR 1 a",
    "touch | ZADD {t}k 1 a | {t}k | ZPOPMIN {t}k 10",
    "touch | ZADD {t}s 1 a 2 b | {t}s | ZRANGESTORE {t}s {t}s 0 -1",
    // hash
    "touch | | {t}k | HSET {t}k f v",
    "touch | HSET {t}k f v | {t}k | HSET {t}k f v",
    "touch | HSET {t}k f v | {t}k | HMSET {t}k f v",
    "none  | HSET {t}k f v | {t}k | HSETNX {t}k f w",
    "touch | HSET {t}k f v | {t}k | HSETNX {t}k g w",
    "touch | | {t}k | HSETNX {t}k g w",
    "none  | HSET {t}k f v | {t}k | HDEL {t}k g",
    "none  | | {t}k | HDEL {t}k g",
    "touch | HSET {t}k f v g w | {t}k | HDEL {t}k f x",
    "touch | HSET {t}k f v | {t}k | HDEL {t}k f",
    "touch | HSET {t}k f 1 | {t}k | HINCRBY {t}k f 0",
    "touch | | {t}k | HINCRBY {t}k f 0",
    "touch | HSET {t}k f 1 | {t}k | HINCRBYFLOAT {t}k f 0",
    "none  | HSET {t}k f x | {t}k | HINCRBY {t}k f 1",
    "none  | HSET {t}k f x | {t}k | HINCRBYFLOAT {t}k f 1",
    "none  | HSET {t}k f v | {t}k | HGET {t}k f ; HGETALL {t}k ; HEXISTS {t}k f ; HLEN {t}k ; HSTRLEN {t}k f ; \
     HMGET {t}k f g ; HKEYS {t}k ; HVALS {t}k",
    "touch | HSET {t}k f v g w | {t}k | HSET {t}k f v g w",
    "none  | HSET {t}k f v | {t}k | HDEL {t}k x y z",
    "touch | | {t}k | HINCRBYFLOAT {t}k f 0",
    "none  | SET {t}k v | {t}k | HSET {t}k f v",
    "none  | HSET {t}k f 1 | {t}k | HSETNX {t}k f 1",
    // hyperloglog
    "touch | | {t}k | PFADD {t}k a",
    "none  | PFADD {t}k a | {t}k | PFADD {t}k a",
    "touch | PFADD {t}k a | {t}k | PFADD {t}k b",
    "touch | | {t}k | PFADD {t}k",
    "none  | PFADD {t}k a | {t}k | PFADD {t}k",
    "none  | SET {t}k a | {t}k | PFADD {t}k a",
    "touch | PFADD {t}k a b c | {t}k | PFCOUNT {t}k",
    "none  | PFADD {t}k a b c ; PFCOUNT {t}k | {t}k | PFCOUNT {t}k",
    "none  | PFADD {t}k a b c ; PFCOUNT {t}k ; PFADD {t}k a | {t}k | PFCOUNT {t}k",
    "touch | PFADD {t}k a b c ; PFCOUNT {t}k ; PFADD {t}k d | {t}k | PFCOUNT {t}k",
    "none  | PFADD {t}k a b c | {t}k | PFCOUNT {t}k {t}o",
    "none  | | {t}k | PFCOUNT {t}k",
    "touch | PFADD {t}s a | {t}d | PFMERGE {t}d {t}s",
    "touch | PFADD {t}s a ; PFMERGE {t}d {t}s | {t}d | PFMERGE {t}d {t}s",
    "touch | | {t}d | PFMERGE {t}d",
    "touch | PFADD {t}d a | {t}d | PFMERGE {t}d",
    "none  | PFADD {t}s a | {t}s | PFMERGE {t}d {t}s",
    "touch | | {t}d | PFMERGE {t}d {t}s",
    "touch | PFADD {t}s a b ; PFADD {t}d c ; PFCOUNT {t}d | {t}d | PFMERGE {t}d {t}s ; PFCOUNT {t}d",
    "none  | PFADD {t}k a ; PFCOUNT {t}k | {t}k | PFADD {t}k a ; PFCOUNT {t}k",
    "none  | SET {t}k notanhll | {t}k | PFADD {t}k a",
    "touch | PFADD {t}d a | {t}d | PFMERGE {t}d {t}d",
    // geo
    "touch | | {t}k | GEOADD {t}k 13.361389 38.115556 a",
    "none  | GEOADD {t}k 13.361389 38.115556 a | {t}k | GEOADD {t}k 13.361389 38.115556 a",
    "touch | GEOADD {t}k 13.361389 38.115556 a | {t}k | GEOADD {t}k 15 37 a",
    "none  | GEOADD {t}k 13.361389 38.115556 a | {t}k | GEOADD {t}k NX 15 37 a",
    "none  | | {t}k | GEOADD {t}k XX 15 37 a",
    "touch | GEOADD {t}k 13.361389 38.115556 a | {t}k | GEOADD {t}k XX 15 37 a",
    "touch | GEOADD {t}k 13.361389 38.115556 a | {t}k | GEOADD {t}k CH 15 37 b",
    "none  | GEOADD {t}k 13.361389 38.115556 a | {t}k | GEOADD {t}k 200 37 a",
    "touch | GEOADD {t}s 13.361389 38.115556 a 15.087269 37.502669 b | {t}d \
     | GEOSEARCHSTORE {t}d {t}s FROMLONLAT 15 37 BYRADIUS 200 km ASC",
    "none  | GEOADD {t}s 13.361389 38.115556 a 15.087269 37.502669 b | {t}s \
     | GEOSEARCHSTORE {t}d {t}s FROMLONLAT 15 37 BYRADIUS 200 km ASC",
    "touch | GEOADD {t}s 13.361389 38.115556 a 15.087269 37.502669 b | {t}d \
     | GEOSEARCHSTORE {t}d {t}s FROMMEMBER a BYBOX 400 400 km ASC STOREDIST",
    "none  | GEOADD {t}s 13.361389 38.115556 a | {t}d | GEOSEARCHSTORE {t}d {t}s FROMLONLAT 0 0 BYRADIUS 1 km",
    "touch | GEOADD {t}s 13.361389 38.115556 a ; ZADD {t}d 1 x | {t}d \
     | GEOSEARCHSTORE {t}d {t}s FROMLONLAT 0 0 BYRADIUS 1 km",
    "none  | | {t}d | GEOSEARCHSTORE {t}d {t}s FROMLONLAT 0 0 BYRADIUS 1 km",
    "touch | ZADD {t}d 1 x | {t}d | GEOSEARCHSTORE {t}d {t}s FROMLONLAT 0 0 BYRADIUS 1 km",
    "touch | GEOADD {t}s 13.361389 38.115556 a 15.087269 37.502669 b | {t}d | GEORADIUS {t}s 15 37 200 km STORE {t}d",
    "touch | GEOADD {t}s 13.361389 38.115556 a 15.087269 37.502669 b | {t}d \
     | GEORADIUSBYMEMBER {t}s a 200 km STOREDIST {t}d",
    "none  | GEOADD {t}s 13.361389 38.115556 a | {t}d | GEORADIUS {t}s 0 0 1 km STORE {t}d",
    "none  | GEOADD {t}k 13.361389 38.115556 a 15.087269 37.502669 b | {t}k | GEOPOS {t}k a ; \
     GEODIST {t}k a b ; GEOSEARCH {t}k FROMMEMBER a BYRADIUS 200 km ASC ; GEOHASH {t}k a ; \
     GEORADIUS_RO {t}k 15 37 200 km ASC",
    "touch | ZADD {t}d 1 x | {t}d | GEORADIUS {t}s 0 0 1 km STORE {t}d",
    // stream: entries
    "touch | | {t}k | XADD {t}k 1-1 f v",
    "none  | | {t}k | XADD {t}k NOMKSTREAM 1-1 f v",
    "touch | XADD {t}k 1-1 f v | {t}k | XADD {t}k NOMKSTREAM 2-1 f v",
    "none  | XADD {t}k 5-1 f v | {t}k | XADD {t}k 1-1 f v",
    "touch | XADD {t}k 1-1 f v | {t}k | XADD {t}k MAXLEN 0 2-1 f v",
    "none  | XADD {t}k 1-1 f v | {t}k | XDEL {t}k 9-9",
    "touch | XADD {t}k 1-1 f v ; XADD {t}k 2-1 f v | {t}k | XDEL {t}k 1-1",
    "touch | XADD {t}k 1-1 f v | {t}k | XDEL {t}k 1-1",
    "none  | | {t}k | XDEL {t}k 1-1",
    "none  | XADD {t}k 1-1 f v | {t}k | XTRIM {t}k MAXLEN 10",
    "touch | XADD {t}k 1-1 f v ; XADD {t}k 2-1 f v | {t}k | XTRIM {t}k MAXLEN 1",
    "none  | | {t}k | XTRIM {t}k MAXLEN 0",
    "none  | XADD {t}k 1-1 f v ; XADD {t}k 2-1 f v | {t}k | XTRIM {t}k MINID 1-0",
    "touch | XADD {t}k 1-1 f v ; XADD {t}k 2-1 f v | {t}k | XTRIM {t}k MINID 2-0",
    "none  | XADD {t}k 1-1 f v | {t}k | XSETID {t}k 5-0",
    "none  | XADD {t}k 1-1 f v | {t}k | XSETID {t}k 1-1",
    "none  | XADD {t}k 1-1 f v | {t}k | XSETID {t}k 0-1",
    "none  | | {t}k | XSETID {t}k 5-0",
    "none  | XADD {t}k 1-1 f v | {t}k | XSETID {t}k 5-0 ENTRIESADDED 3 MAXDELETEDID 2-0",
    "none  | XADD {t}k 1-1 f v ; XADD {t}k 2-1 f v | {t}k | XRANGE {t}k - + ; XREVRANGE {t}k + - ; XLEN {t}k ; \
     XREAD STREAMS {t}k 0",
    "touch | XADD {t}k 1-1 f v | {t}k | XADD {t}k MAXLEN 1 2-1 f v",
    "none  | XADD {t}k 1-1 f v ; XADD {t}k 2-1 f v | {t}k | XTRIM {t}k MAXLEN ~ 1",
    "touch | XADD {t}k 1-1 f v | {t}k | XTRIM {t}k MAXLEN 0",
    "touch | XADD {t}k 1-1 f v ; XADD {t}k 2-1 f v | {t}k | XDEL {t}k 9-9 2-1 1-1",
    "none  | SET {t}k v | {t}k | XADD {t}k 1-1 f v",
    // stream: groups
    "none  | XADD {t}k 1-1 f v | {t}k | XGROUP CREATE {t}k g 0",
    "touch | | {t}k | XGROUP CREATE {t}k g $ MKSTREAM",
    "none  | | {t}k | XGROUP CREATE {t}k g $",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 | {t}k | XGROUP CREATE {t}k g 0",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 | {t}k | XGROUP DESTROY {t}k g",
    "none  | XADD {t}k 1-1 f v | {t}k | XGROUP DESTROY {t}k g",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 | {t}k | XGROUP CREATECONSUMER {t}k g c",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 ; XGROUP CREATECONSUMER {t}k g c | {t}k \
     | XGROUP CREATECONSUMER {t}k g c",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 ; XGROUP CREATECONSUMER {t}k g c | {t}k \
     | XGROUP DELCONSUMER {t}k g c",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 | {t}k | XGROUP DELCONSUMER {t}k g c",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 | {t}k | XGROUP SETID {t}k g $",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 | {t}k | XGROUP SETID {t}k g 0",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 | {t}k | XREADGROUP GROUP g c STREAMS {t}k >",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g $ | {t}k | XREADGROUP GROUP g c STREAMS {t}k >",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 ; XREADGROUP GROUP g c STREAMS {t}k > | {t}k \
     | XREADGROUP GROUP g c STREAMS {t}k 0",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 ; XREADGROUP GROUP g c STREAMS {t}k > | {t}k | XACK {t}k g 1-1",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 ; XREADGROUP GROUP g c STREAMS {t}k > | {t}k | XACK {t}k g 9-9",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 ; XREADGROUP GROUP g c STREAMS {t}k > | {t}k \
     | XCLAIM {t}k g c2 0 1-1",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 ; XREADGROUP GROUP g c STREAMS {t}k > | {t}k \
     | XCLAIM {t}k g c2 0 9-9",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 ; XREADGROUP GROUP g c STREAMS {t}k > | {t}k \
     | XAUTOCLAIM {t}k g c2 0 0-0",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 | {t}k | XAUTOCLAIM {t}k g c2 0 0-0",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 ; XREADGROUP GROUP g c STREAMS {t}k > | {t}k | XPENDING {t}k g",
    "none  | XADD {t}k 1-1 f v | {t}k | XGROUP CREATE {t}k g 0 MKSTREAM",
    "none  | XADD {t}k 1-1 f v | {t}k | XGROUP CREATE {t}k g 0 ENTRIESREAD 1",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 | {t}k | XREADGROUP GROUP g c NOACK STREAMS {t}k >",
    "none  | XADD {t}k 1-1 f v ; XGROUP CREATE {t}k g 0 ; XREADGROUP GROUP g c STREAMS {t}k > | {t}k \
     | XCLAIM {t}k g c2 0 1-1 JUSTID",
    "none  | XADD {t}k 1-1 f v ; XADD {t}k 2-1 f v ; XGROUP CREATE {t}k g 0 ; \
     XREADGROUP GROUP g c STREAMS {t}k > ; XDEL {t}k 1-1 | {t}k | XAUTOCLAIM {t}k g c2 0 0-0",
    "none  | XADD {t}k 1-1 f v ; XADD {t}k 2-1 f v ; XGROUP CREATE {t}k g 0 ; XREADGROUP GROUP g c STREAMS {t}k > \
     | {t}k | XACK {t}k g 1-1 2-1 3-1",
    // generic: DEL, expiry
    "touch | SET {t}k v | {t}k | DEL {t}k",
    "none  | | {t}k | DEL {t}k",
    "none  | SET {t}k v | {t}k | DEL {t}o",
    "touch | SET {t}k v | {t}k | UNLINK {t}o {t}k",
    "none  | | {t}k | UNLINK {t}k",
    "touch | SET {t}k v | {t}k | EXPIRE {t}k 100",
    "touch | SET {t}k v EX 100 | {t}k | EXPIRE {t}k 100",
    "none  | | {t}k | EXPIRE {t}k 100",
    "touch | SET {t}k v | {t}k | EXPIRE {t}k 100 NX",
    "none  | SET {t}k v EX 100 | {t}k | EXPIRE {t}k 200 NX",
    "none  | SET {t}k v | {t}k | EXPIRE {t}k 100 XX",
    "touch | SET {t}k v EX 100 | {t}k | EXPIRE {t}k 200 XX",
    "none  | SET {t}k v | {t}k | EXPIRE {t}k 100 GT",
    "touch | SET {t}k v EX 100 | {t}k | EXPIRE {t}k 200 GT",
    "none  | SET {t}k v EX 100 | {t}k | EXPIRE {t}k 50 GT",
    "touch | SET {t}k v | {t}k | EXPIRE {t}k 100 LT",
    "touch | SET {t}k v EX 100 | {t}k | EXPIRE {t}k 50 LT",
    "none  | SET {t}k v EX 100 | {t}k | EXPIRE {t}k 200 LT",
    "touch | SET {t}k v | {t}k | EXPIRE {t}k 0",
    "touch | SET {t}k v | {t}k | EXPIRE {t}k -5",
    "none  | SET {t}k v | {t}k | EXPIRE {t}k -5 XX",
    "touch | SET {t}k v | {t}k | PEXPIRE {t}k 100000",
    "none  | SET {t}k v | {t}k | PEXPIRE {t}k 100000 XX",
    "touch | SET {t}k v | {t}k | EXPIREAT {t}k 4102444800",
    "touch | SET {t}k v | {t}k | EXPIREAT {t}k 1",
    "touch | SET {t}k v | {t}k | PEXPIREAT {t}k 4102444800000",
    "touch | SET {t}k v PXAT 4102444800000 | {t}k | PEXPIREAT {t}k 4102444800000",
    "none  | SET {t}k v PXAT 4102444800000 | {t}k | PEXPIREAT {t}k 4102444800000 GT",
    "none  | SET {t}k v PXAT 4102444800000 | {t}k | PEXPIREAT {t}k 4102444800000 LT",
    "none  | SET {t}k v | {t}k | PERSIST {t}k",
    "touch | SET {t}k v EX 100 | {t}k | PERSIST {t}k",
    "none  | | {t}k | PERSIST {t}k",
    "none  | SET {t}k v EX 100 | {t}k | TTL {t}k ; EXISTS {t}k ; TYPE {t}k ; TOUCH {t}k ; KEYS * ; DBSIZE ; RANDOMKEY",
    "touch | SET {t}k v ; SET {t}o w | {t}k | DEL {t}o {t}k {t}p",
    "none  | SET {t}k v | {t}k | EXPIRE {t}k 100 NX GT",
    "none  | SET {t}k v | {t}k | PEXPIREAT {t}k 1 XX",
    "touch | SET {t}k v | {t}k | EXPIREAT {t}k 1 NX",
    "touch | SET {t}k v EX 100 | {t}k | EXPIREAT {t}k 1 LT",
    "none  | SET {t}k v EX 100 | {t}k | EXPIREAT {t}k 1 GT",
    "touch | HSET {t}k f v ; EXPIRE {t}k 100 | {t}k | PERSIST {t}k",
    // generic: RENAME, COPY, MOVE, RESTORE
    "touch | SET {t}k v | {t}k | RENAME {t}k {t}d",
    "touch | SET {t}k v | {t}d | RENAME {t}k {t}d",
    "touch | SET {t}k v ; SET {t}d v | {t}d | RENAME {t}k {t}d",
    "none  | SET {t}k v | {t}k | RENAME {t}k {t}k",
    "none  | SET {t}k v | {t}k | RENAMENX {t}k {t}k",
    "none  | SET {t}k v ; SET {t}d w | {t}k | RENAMENX {t}k {t}d",
    "none  | SET {t}k v ; SET {t}d w | {t}d | RENAMENX {t}k {t}d",
    "touch | SET {t}k v | {t}d | RENAMENX {t}k {t}d",
    "none  | | {t}d | RENAME {t}k {t}d",
    "touch | SET {t}s v | {t}d | COPY {t}s {t}d",
    "none  | SET {t}s v | {t}s | COPY {t}s {t}d",
    "none  | SET {t}s v ; SET {t}d w | {t}d | COPY {t}s {t}d",
    "touch | SET {t}s v ; SET {t}d w | {t}d | COPY {t}s {t}d REPLACE",
    "touch | SET {t}s v ; SET {t}d v | {t}d | COPY {t}s {t}d REPLACE",
    "none  | SET {t}s v | {t}d | COPY {t}s {t}d DB 1",
    "none  | | {t}d | COPY {t}s {t}d REPLACE",
    "none  | SET {t}s v | {t}s | COPY {t}s {t}s REPLACE",
    "touch | SET {t}k v | {t}k | MOVE {t}k 1",
    "none  | SET {t}k v ; SELECT 1 ; SET {t}k w ; SELECT 0 | {t}k | MOVE {t}k 1",
    "none  | | {t}k | MOVE {t}k 1",
    "touch | SELECT 1 ; SET {t}k w ; SELECT 0 | {t}k | SELECT 1 ; MOVE {t}k 0 ; SELECT 0",
    "touch | SET {t}s v | {t}k | RESTORE {t}k 0 @{t}s",
    "none  | SET {t}s v ; SET {t}k w | {t}k | RESTORE {t}k 0 @{t}s",
    "touch | SET {t}s v ; SET {t}k w | {t}k | RESTORE {t}k 0 @{t}s REPLACE",
    "touch | SET {t}s v ; SET {t}k w | {t}k | RESTORE {t}k 1 @{t}s REPLACE ABSTTL",
    "none  | SET {t}s v | {t}k | RESTORE {t}k 1 @{t}s ABSTTL",
    "touch | SET {t}k v EX 100 | {t}d | RENAME {t}k {t}d",
    "none  | | {t}d | COPY {t}s {t}d",
    "none  | SET {t}d w | {t}d | COPY {t}s {t}d REPLACE",
    "touch | SET {t}s v | {t}d | COPY {t}s {t}d DB 0",
    "touch | ZADD {t}s 1 a | {t}d | COPY {t}s {t}d",
    "none  | SET {t}k v | {t}k | MOVE {t}k 0",
    "touch | SET {t}s v | {t}k | RESTORE {t}k 0 @{t}s IDLETIME 10",
    // generic: SORT ... STORE
    "touch | RPUSH {t}s 3 1 2 | {t}d | SORT {t}s STORE {t}d",
    "none  | RPUSH {t}s 3 1 2 | {t}s | SORT {t}s STORE {t}d",
    "none  | | {t}d | SORT {t}s STORE {t}d",
    "touch | SET {t}d v | {t}d | SORT {t}s STORE {t}d",
    "touch | RPUSH {t}s 1 2 ; RPUSH {t}d 1 2 | {t}d | SORT {t}s STORE {t}d",
    "touch | SADD {t}s b a | {t}d | SORT {t}s ALPHA STORE {t}d",
    "touch | RPUSH {t}s 1 2 ; SET {t}w_1 5 ; SET {t}w_2 3 | {t}d | SORT {t}s BY {t}w_* STORE {t}d",
    "none  | RPUSH {t}s 3 1 2 | {t}s | SORT {t}s ; SORT_RO {t}s",
    "touch | RPUSH {t}s 1 2 ; SET {t}d v | {t}d | SORT {t}s LIMIT 0 0 STORE {t}d",
    "none  | RPUSH {t}s 1 2 | {t}d | SORT {t}s LIMIT 0 0 STORE {t}d",
    "touch | RPUSH {t}s 1 2 ; SET {t}w_1 a ; SET {t}w_2 b | {t}d | SORT {t}s GET {t}w_* GET # STORE {t}d",
    // generic: FLUSHDB, FLUSHALL, SWAPDB
    "touch | SET {t}k v | {t}k | FLUSHDB",
    "none  | SET {t}o v | {t}k | FLUSHDB",
    "touch | SET {t}k v | {t}k | FLUSHALL",
    "none  | SET {t}o v | {t}k | FLUSHALL",
    "touch | SET {t}k v | {t}k | FLUSHALL ASYNC",
    "touch | SET {t}k v | {t}k | FLUSHDB SYNC",
    "none  | SET {t}k v | {t}k | SELECT 1 ; FLUSHDB ; SELECT 0",
    "none  | SELECT 1 ; SET {t}k v ; SELECT 0 | {t}k | FLUSHALL",
    "touch | SET {t}k v | {t}k | SWAPDB 0 1",
    "touch | SELECT 1 ; SET {t}k v ; SELECT 0 | {t}k | SWAPDB 1 0",
    "touch | SET {t}k v ; SELECT 1 ; SET {t}k v ; SELECT 0 | {t}k | SWAPDB 0 1",
    "none  | SET {t}o v ; SELECT 1 ; SET {t}o v ; SELECT 0 | {t}k | SWAPDB 0 1",
    "none  | SET {t}k v | {t}k | SWAPDB 1 2",
    "none  | SET {t}k v | {t}k | SWAPDB 0 0",
    "touch | SET {t}k v | {t}k | FLUSHDB ASYNC",
    "touch | SELECT 1 ; SET {t}k v ; SELECT 0 | {t}k | SELECT 1 ; SWAPDB 1 0 ; SELECT 0",
    // transactions and scripts
    "touch | SADD {t}k a | {t}k | MULTI ; SADD {t}k b ; EXEC",
    "none  | SADD {t}k a | {t}k | MULTI ; SADD {t}k a ; SREM {t}k z ; EXEC",
    "none  | SADD {t}k a | {t}k | MULTI ; SADD {t}k b ; DISCARD",
    "touch | SADD {t}k a | {t}k | EVAL redis.call('SADD',KEYS[1],'b') 1 {t}k",
    "none  | SADD {t}k a | {t}k | EVAL redis.call('SADD',KEYS[1],'a') 1 {t}k",
    "none  | SET {t}k 1 | {t}k | EVAL redis.call('GET',KEYS[1]) 1 {t}k",
    "touch | SET {t}k v | {t}k | EVAL redis.call('SET',KEYS[1],'v') 1 {t}k",
    "none  | SETBIT {t}k 0 1 | {t}k | EVAL redis.call('SETBIT',KEYS[1],0,1) 1 {t}k",
    "none  | SET {t}k v | {t}k | MULTI ; SETNX {t}k w ; GET {t}k ; EXEC",
];

/// One row of [`CASES`].
struct Case {
    touch: bool,
    setup: Vec<&'static str>,
    key: &'static str,
    change: Vec<&'static str>,
}

/// The commands of a `;`-separated list.
fn lines(s: &'static str) -> Vec<&'static str> {
    s.split(';').map(str::trim).filter(|l| !l.is_empty()).collect()
}

fn parse(case: &'static str) -> Case {
    let parts: Vec<&'static str> = case.split('|').map(str::trim).collect();
    assert_eq!(parts.len(), 4, "a case is `outcome | setup | key | change`: {case}");
    let touch = match parts[0] {
        "touch" => true,
        "none" => false,
        o => panic!("the outcome {o:?} is neither `touch` nor `none`: {case}"),
    };
    let c = Case { touch, setup: lines(parts[1]), key: parts[2], change: lines(parts[3]) };
    assert!(!c.key.is_empty() && !c.change.is_empty(), "a case names a key and a change: {case}");
    c
}

/// A reply for a message: escaped, cut at 300 characters.
fn text(r: &[u8]) -> String {
    let s = format!("{:?}", String::from_utf8_lossy(r));
    match s.char_indices().nth(300) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

/// The payload of `DUMP key` on `c` (any other reply as it is: RESTORE then
/// fails, and the case shows it).
fn dump(c: &mut Raw, key: &str) -> Vec<u8> {
    c.send_cmd(&[b"DUMP", key.as_bytes()]);
    let r = c.read_reply();
    let start = r.iter().position(|&b| b == b'\n').map_or(r.len(), |i| i + 1);
    if !r.starts_with(b"$") || r.starts_with(b"$-") || r.len() < start + 2 {
        return r;
    }
    r[start..r.len() - 2].to_vec()
}

/// Send one command of a case (words split on spaces, see [`CASES`]); its reply.
fn send(c: &mut Raw, line: &str) -> Vec<u8> {
    let args: Vec<Vec<u8>> = line
        .split_whitespace()
        .map(|w| match w.strip_prefix('@') {
            Some(key) => dump(c, key),
            None if w == "''" => Vec::new(),
            None => w.as_bytes().to_vec(),
        })
        .collect();
    let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    c.send_cmd(&args);
    c.read_reply()
}

/// What a case did on one server.
struct Outcome {
    setup: Vec<Vec<u8>>,
    change: Vec<Vec<u8>>,
    aborted: bool,
}

/// Run `case` on one server: `other` sets up and changes, `me` watches (as
/// `exec_survives` in `txn.rs`). `Err` if the server strayed from the script
/// (a setup command failed, WATCH or the transaction replied otherwise).
fn run(me: &mut Raw, other: &mut Raw, case: &Case) -> Result<Outcome, String> {
    for line in ["SELECT 0", "FLUSHALL"] {
        let r = send(other, line);
        if r != b"+OK\r\n" {
            return Err(format!("`{line}` replied {}", text(&r)));
        }
    }
    let mut setup = Vec::with_capacity(case.setup.len());
    for line in &case.setup {
        let r = send(other, line);
        if r.starts_with(b"-") {
            return Err(format!("the setup's `{line}` failed: {}", text(&r)));
        }
        setup.push(r);
    }
    let r = send(me, &format!("WATCH {}", case.key));
    if r != b"+OK\r\n" {
        return Err(format!("WATCH replied {}", text(&r)));
    }
    let change = case.change.iter().map(|line| send(other, line)).collect();
    let tx = [send(me, "MULTI"), send(me, "PING"), send(me, "EXEC")];
    let aborted = match (&tx[0][..], &tx[1][..], &tx[2][..]) {
        (b"+OK\r\n", b"+QUEUED\r\n", b"*-1\r\n") => true,
        (b"+OK\r\n", b"+QUEUED\r\n", b"*1\r\n+PONG\r\n") => false,
        _ => return Err(format!("MULTI, PING, EXEC replied {}", text(&tx.concat()))),
    };
    Ok(Outcome { setup, change, aborted })
}

/// Replies that say the same: equal bytes, or errors with the same code (their
/// texts are other tests' business).
fn same_reply(a: &[u8], b: &[u8]) -> bool {
    let code = |r: &[u8]| r.split(|&c| c == b' ' || c == b'\r').next().map(<[u8]>::to_vec);
    a == b || (a.starts_with(b"-") && b.starts_with(b"-") && code(a) == code(b))
}

#[test]
fn watch_touch_rules_match_redis() {
    let neokv = Server::start_with(&["--cores", "2"]);
    let redis = Oracle::start();
    let (mut n_me, mut n_other) = (neokv.raw(), neokv.raw());
    let (mut r_me, mut r_other) = (redis.raw(), redis.raw());
    let mut diffs = Vec::new();
    for row in CASES {
        let case = parse(row);
        let what = format!("WATCH {}, {}", case.key, case.change.join("; "));
        // Said after each difference: changes alike follow different setups.
        let after = if case.setup.is_empty() { String::new() } else { format!(" (after {})", case.setup.join("; ")) };
        let (got, want) = match (run(&mut n_me, &mut n_other, &case), run(&mut r_me, &mut r_other, &case)) {
            (Ok(got), Ok(want)) => (got, want),
            (got, want) => {
                // The connections may be out of step: the next case starts afresh.
                if let Err(e) = got {
                    diffs.push(format!("{what}: on NeoKV, {e}{after}"));
                    (n_me, n_other) = (neokv.raw(), neokv.raw());
                }
                if let Err(e) = want {
                    diffs.push(format!("{what}: on Redis, {e}{after}"));
                    (r_me, r_other) = (redis.raw(), redis.raw());
                }
                continue;
            }
        };
        if got.aborted != want.aborted {
            diffs.push(format!("{what}: NeoKV aborted={}, Redis aborted={}{after}", got.aborted, want.aborted));
        }
        if want.aborted != case.touch {
            let table = if case.touch { "touch" } else { "none" };
            diffs.push(format!("{what}: Redis aborted={}, but the table says `{table}`{after}", want.aborted));
        }
        let steps = case.setup.iter().map(|l| ("setup", l)).chain(case.change.iter().map(|l| ("change", l)));
        let replies = got.setup.iter().chain(&got.change).zip(want.setup.iter().chain(&want.change));
        for ((part, line), (g, w)) in steps.zip(replies) {
            if !same_reply(g, w) {
                let (g, w) = (text(g), text(w));
                diffs.push(format!("{what}: the {part}'s `{line}` replied {g} on NeoKV, {w} on Redis{after}"));
            }
        }
    }
    assert!(diffs.is_empty(), "{} differences over {} cases:\n{}", diffs.len(), CASES.len(), diffs.join("\n"));
}
