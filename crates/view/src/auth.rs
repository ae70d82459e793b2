//! The access token: when set (a non-loopback `--listen`), every request carries it as
//! `?token=…`, `Authorization: Bearer …` or the cookie the server sets on the first request
//! that gave it in the query (so the page's own assets and requests need nothing more).

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;

/// The cookie holding the token.
pub const COOKIE: &str = "tracekit_token";

/// A new random token (128 bits, hex).
pub fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

fn same(a: &str, b: &str) -> bool {
    // Compared in time independent of where they differ.
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The middleware: rejects a request without the token (401).
pub async fn check_token(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let Some(token) = st.config().token.clone() else {
        return next.run(req).await;
    };
    let from_query = req
        .uri()
        .query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter_map(|kv| kv.strip_prefix("token="))
        .any(|v| same(v, &token));
    let from_header = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|v| same(v.trim(), &token));
    let from_cookie = req
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| {
            c.trim()
                .strip_prefix(COOKIE)
                .and_then(|c| c.strip_prefix('='))
        })
        .any(|v| same(v, &token));
    if !(from_query || from_header || from_cookie) {
        return ApiError::Unauthorized.into_response();
    }
    let mut resp = next.run(req).await;
    if from_query && !from_cookie {
        if let Ok(v) = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict").parse() {
            resp.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    resp
}
