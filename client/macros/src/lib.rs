//! `#[lock]`, the Rust form of the Neton spec's `@Lock` (§5.5). Use it as
//! `neokv_client::lock`; this crate only expands it, into a call of
//! `LockManager::with_lock_options`.

#![warn(missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::Span;
use quote::quote;
use syn::spanned::Spanned;
use syn::{parse_macro_input, Error, Expr, FnArg, ItemFn, LitBool, LitInt, LitStr, Pat, ReturnType, Type};

/// Run an `async fn` holding a distributed lock. See `neokv_client::lock`
/// for the full description.
#[proc_macro_attribute]
pub fn lock(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut args = Args::default();
    let parser = syn::meta::parser(|meta| args.parse(meta));
    parse_macro_input!(attr with parser);
    let func = parse_macro_input!(item as ItemFn);
    match expand(args, func) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

#[derive(Default)]
struct Args {
    key: Option<LitStr>,
    ttl_ms: Option<LitInt>,
    wait_ms: Option<LitInt>,
    retry_ms: Option<LitInt>,
    auto_renew: Option<LitBool>,
    locks: Option<Expr>,
}

impl Args {
    fn parse(&mut self, meta: syn::meta::ParseNestedMeta) -> syn::Result<()> {
        let name = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        match name.as_str() {
            "key" => self.key = Some(meta.value()?.parse()?),
            "ttl_ms" => self.ttl_ms = Some(meta.value()?.parse()?),
            "wait_ms" => self.wait_ms = Some(meta.value()?.parse()?),
            "retry_ms" => self.retry_ms = Some(meta.value()?.parse()?),
            "auto_renew" => self.auto_renew = Some(meta.value()?.parse()?),
            "locks" => self.locks = Some(meta.value()?.parse()?),
            _ => {
                return Err(
                    meta.error("unknown #[lock] setting: expected key, ttl_ms, wait_ms, retry_ms, auto_renew or locks")
                )
            }
        }
        Ok(())
    }
}

/// The placeholders `{name}` of a key template (`{{` and `}}` are literal
/// braces, as in `format!`).
fn placeholders(template: &LitStr) -> syn::Result<Vec<String>> {
    let text = template.value();
    let mut names = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
            }
            '{' => {
                let name: String = chars.by_ref().take_while(|c| *c != '}').collect();
                let ident = name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
                    && name.chars().all(|c| c.is_alphanumeric() || c == '_');
                if !ident {
                    return Err(Error::new(
                        template.span(),
                        format!(
                            "#[lock] key template: `{{{name}}}` is not a parameter name (only `{{param}}`; \
                             write a literal brace as `{{{{` or `}}}}`)"
                        ),
                    ));
                }
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            '}' => {
                return Err(Error::new(
                    template.span(),
                    "#[lock] key template: a lone `}` (write a literal brace as `}}`)",
                ))
            }
            _ => {}
        }
    }
    Ok(names)
}

/// True if `ty` is `LockManager`, `&LockManager`, `Arc<LockManager>` and the like.
fn mentions_lock_manager(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => mentions_lock_manager(&r.elem),
        Type::Path(p) => p.path.segments.last().is_some_and(|s| {
            s.ident == "LockManager"
                || matches!(&s.arguments, syn::PathArguments::AngleBracketed(a)
                    if a.args.iter().any(|g| matches!(g, syn::GenericArgument::Type(t) if mentions_lock_manager(t))))
        }),
        _ => false,
    }
}

fn expand(args: Args, func: ItemFn) -> syn::Result<proc_macro2::TokenStream> {
    let sig = &func.sig;
    if sig.asyncness.is_none() {
        return Err(Error::new(sig.fn_token.span(), "#[lock] goes on an `async fn`"));
    }
    let ReturnType::Type(_, ret) = &sig.output else {
        return Err(Error::new(
            sig.span(),
            "#[lock]: the function must return a Result whose error type implements From<LockError>",
        ));
    };
    let Some(key) = args.key else {
        return Err(Error::new(Span::call_site(), "#[lock] needs a key: #[lock(key = \"order:{order_id}\")]"));
    };
    // The parameters the template may name: plain identifiers.
    let mut params = Vec::new();
    let mut manager_param = None;
    for input in &sig.inputs {
        if let FnArg::Typed(t) = input {
            if let Pat::Ident(p) = &*t.pat {
                params.push(p.ident.clone());
                if manager_param.is_none() && mentions_lock_manager(&t.ty) {
                    manager_param = Some(p.ident.clone());
                }
            }
        }
    }
    let mut fmt_args = Vec::new();
    for name in placeholders(&key)? {
        let Some(ident) = params.iter().find(|p| **p == name) else {
            return Err(Error::new(
                key.span(),
                format!("#[lock] key template: `{{{name}}}` names no parameter of `{}`", sig.ident),
            ));
        };
        fmt_args.push(quote!(#ident = #ident));
    }
    let locks = match (args.locks, manager_param) {
        (Some(e), _) => quote!(#e),
        (None, Some(p)) => quote!(#p),
        (None, None) => {
            return Err(Error::new(
                sig.ident.span(),
                "#[lock] needs a LockManager: take one as a parameter (`locks: &LockManager`) \
                 or name it with `locks = <expression>` (for example `locks = self.locks`)",
            ))
        }
    };
    let ttl = args.ttl_ms.map_or(quote!(10_000u64), |v| quote!(#v));
    let wait = args.wait_ms.map_or(quote!(0u64), |v| quote!(#v));
    let retry = args.retry_ms.map_or(quote!(50u64), |v| quote!(#v));
    let renew = args.auto_renew.map_or(quote!(false), |v| quote!(#v));
    let (attrs, vis, block) = (&func.attrs, &func.vis, &func.block);
    Ok(quote! {
        #(#attrs)*
        #vis #sig {
            let __neokv_key = ::std::format!(#key, #(#fmt_args),*);
            let __neokv_locks = ::neokv_client::LockManager::clone(&(#locks));
            let __neokv_opts = ::neokv_client::LockOptions::new(::std::time::Duration::from_millis(#ttl))
                .wait(::std::time::Duration::from_millis(#wait))
                .retry_interval(::std::time::Duration::from_millis(#retry))
                .auto_renew(#renew);
            match __neokv_locks
                .with_lock_options(&__neokv_key, __neokv_opts, move || {
                    ::neokv_client::__private::returning::<#ret, _>(async move #block)
                })
                .await
            {
                ::std::result::Result::Ok(r) => r,
                ::std::result::Result::Err(e) => ::std::result::Result::Err(::std::convert::From::from(e)),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(t: &str) -> Result<Vec<String>, String> {
        placeholders(&LitStr::new(t, Span::call_site())).map_err(|e| e.to_string())
    }

    #[test]
    fn templates_name_parameters_and_keep_doubled_braces() {
        assert_eq!(names("order:{order_id}").unwrap(), ["order_id"]);
        assert_eq!(names("{{tag}}:{a}:{b}:{a}").unwrap(), ["a", "b"]);
        assert_eq!(names("plain").unwrap(), Vec::<String>::new());
        assert!(names("order:{id:?}").unwrap_err().contains("is not a parameter name"));
        assert!(names("order:{}").unwrap_err().contains("is not a parameter name"));
        assert!(names("order:{1x}").unwrap_err().contains("is not a parameter name"));
        assert!(names("order:}").unwrap_err().contains("lone"));
    }

    #[test]
    fn the_manager_parameter_is_found_by_its_type() {
        for ty in ["LockManager", "&LockManager", "Arc<LockManager>", "&neokv_client::LockManager"] {
            assert!(mentions_lock_manager(&syn::parse_str::<Type>(ty).unwrap()), "{ty}");
        }
        for ty in ["u64", "&str", "Arc<Orders>"] {
            assert!(!mentions_lock_manager(&syn::parse_str::<Type>(ty).unwrap()), "{ty}");
        }
    }
}
