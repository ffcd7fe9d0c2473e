//! The `image` source (spec controller.md §1.3): a container repository's tags, one
//! chosen by the selection rules (§1.4), and the digest that tag points at — for a
//! multi-arch image the index's, which is what a node pulls. The artifact keeps the
//! repository exactly as the watch writes it.

use hecate_types::{Artifact, ImageWatch};

use super::select::Selection;
use super::source::ResolveError;
use crate::oci::{Basic, Registry, Repository};

/// Resolves `watch` with `auth` (none: anonymous).
pub async fn resolve(
    registry: &Registry,
    watch: &ImageWatch,
    auth: Option<&Basic>,
) -> Result<Artifact, ResolveError> {
    if !watch.platform.is_empty() {
        return Err(ResolveError::unsupported(format!(
            "image {}: platform is not supported; the digest followed is the one a node \
             pulls (the index, for a multi-arch image)",
            watch.repo
        )));
    }
    let repo = Repository::parse(&watch.repo, watch.insecure)?;
    let mut session = registry.session(&repo, auth);
    let tags = session.tags().await?;
    let selection = Selection {
        strategy: watch.select,
        constraint: &watch.constraint,
        allow: &watch.allow,
        ignore: &watch.ignore,
    };
    let tag = selection.pick(&tags).map_err(|e| ResolveError {
        message: format!("image {}: {}", watch.repo, e.message),
        ..e
    })?;
    let digest = session.digest(&tag).await?;
    Ok(Artifact::image(watch.repo.clone(), tag, digest))
}
