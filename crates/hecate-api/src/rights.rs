//! `GET …/namespaces/{ns}/rights`: what the caller may do in a namespace — every
//! namespaced operation of ops' catalogue, each asked of the cluster as the caller
//! (hecate-access' `Reviewer::advise`: one SubjectAccessReview per distinct
//! permission, cached as reads are). Any authenticated caller may ask about themselves,
//! so someone who may read nothing is told so instead of refused. The UI draws the
//! header's "alice · may read" from it and disables what the caller may not do,
//! naming the role that would allow it; the cluster still decides each write.

use axum::Json;
use axum::extract::{Path, State};
use hecate_access::quote::quote;
use hecate_ops::Rights;
use hecate_types::names::is_dns_label;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

pub(crate) async fn rights(
    State(state): State<AppState>,
    caller: Caller,
    Path(ns): Path<String>,
) -> Result<Json<Rights>, ApiError> {
    if !is_dns_label(&ns) {
        return Err(ApiError::bad_request(format!(
            "{} is not a valid namespace name",
            quote(&ns)
        )));
    }
    let decided = state
        .reviewer
        .advise(&caller, hecate_ops::rights::namespaced(), &ns)
        .await?;
    Ok(Json(Rights::new(caller.username, ns, decided)))
}
