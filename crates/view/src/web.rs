//! The single-page app, embedded from `web/` at build time (no Node toolchain needed).

use axum::http::{header, Uri};
use axum::response::{IntoResponse, Response};

#[derive(rust_embed::Embed)]
#[folder = "web/"]
struct Web;

/// Serves `web/PATH` (`/` is `index.html`) with its content type.
pub async fn static_file(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    match Web::get(path) {
        Some(f) => (
            [
                (header::CONTENT_TYPE, f.metadata.mimetype().to_string()),
                (header::CACHE_CONTROL, "no-cache".to_string()),
            ],
            f.data.into_owned(),
        )
            .into_response(),
        None => crate::error::ApiError::NotFound(format!("no file {path}")).into_response(),
    }
}

/// The embedded files' paths.
pub fn files() -> Vec<String> {
    Web::iter().map(|p| p.into_owned()).collect()
}
