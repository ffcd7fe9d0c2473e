//! Errors as the API answers them: `{"error": …, "status": …}` with the right status
//! code, and the stable refusal code when a rule said no.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hecate_ops::Error;
use serde::Serialize;

/// A failed request, ready to answer.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    code: Option<String>,
}

#[derive(Serialize)]
struct Body<'a> {
    error: &'a str,
    status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'a str>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            code: None,
        }
    }

    /// No credential, or one the cluster does not accept. The reason is never
    /// repeated: it would help someone guessing tokens.
    pub(crate) fn unauthenticated() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "authentication required")
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// The status this error answers with.
    pub fn status(&self) -> StatusCode {
        self.status
    }
}

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        match &error {
            Error::NotFound { .. } => Self::new(StatusCode::NOT_FOUND, error.to_string()),
            Error::Refused { code, .. } => Self {
                status: StatusCode::CONFLICT,
                message: error.to_string(),
                code: Some(code.as_str().to_string()),
            },
            Error::Kubernetes { .. } | Error::Fides { .. } | Error::Watch { .. } => {
                Self::internal(error.to_string())
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self
            .status
            .canonical_reason()
            .unwrap_or("error")
            .to_lowercase();
        let body = Body {
            error: &self.message,
            status,
            code: self.code.as_deref(),
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(r#"Bearer realm="hecate""#),
            );
        }
        response
    }
}
