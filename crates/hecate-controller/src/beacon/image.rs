//! The `image` source (spec controller.md §1.3): a container repository's tags, one
//! chosen by the selection rules (§1.4), and the digest that tag points at — for a
//! multi-arch image the index's, which is what a node pulls. The artifact keeps the
//! repository exactly as the watch writes it.
//!
//! An unchanged repository costs one request per poll ([`hecate_sources::oci::cache`]): the tag
//! list, the chosen tag's digest being remembered (for an hour; a poll someone asked
//! for looks it up again, so `hecate poll` after re-pushing a tag finds the new
//! digest). `select: Digest` names its tag, so it asks for that tag's digest alone,
//! every poll (a tag that is not there answers 404, which is "nothing matches", as an
//! absent tag in the list would be), and never for the list.

use hecate_sources::oci::{Basic, Cache, ErrorKind, Recheck, Registry, Repository};
use hecate_types::{Artifact, ImageWatch, TagSelection};

use super::select::Selection;
use super::source::{Occasion, ResolveError};

/// Resolves `watch` with `auth` (none: anonymous) through `registry`, remembering in
/// `cache`; a requested poll looks the chosen tag's digest up again.
pub async fn resolve(
    (registry, cache): (&Registry, &Cache),
    watch: &ImageWatch,
    auth: Option<&Basic>,
    occasion: Occasion,
) -> Result<Artifact, ResolveError> {
    if !watch.platform.is_empty() {
        return Err(ResolveError::unsupported(format!(
            "image {}: platform is not supported; the digest followed is the one a node \
             pulls (the index, for a multi-arch image)",
            watch.repo
        )));
    }
    let repo = Repository::parse(&watch.repo, watch.insecure)?;
    let selection = Selection {
        strategy: watch.select,
        constraint: &watch.constraint,
        allow: &watch.allow,
        ignore: &watch.ignore,
    };
    let in_words = |e: ResolveError| ResolveError {
        message: format!("image {}: {}", watch.repo, e.message),
        ..e
    };
    if watch.select == Some(TagSelection::Digest) {
        let tag = selection.pick(&[&watch.constraint]).map_err(in_words)?;
        hecate_sources::oci::check_tag(&tag).map_err(|why| in_words(ResolveError::failed(why)))?;
        let mut look = cache.look(registry, &repo, auth).await;
        return match look.digest(&tag, Recheck::Always).await {
            Ok(digest) => Ok(Artifact::image(watch.repo.clone(), tag, digest)),
            Err(error) if error.kind == ErrorKind::NotFound => Err(in_words(
                ResolveError::no_match(format!("tag {tag:?} is not there")),
            )),
            Err(error) => Err(error.into()),
        };
    }
    let mut look = cache.look(registry, &repo, auth).await;
    let tags = look.tags().await?;
    let tag = selection.pick(&tags).map_err(in_words)?;
    let recheck = match occasion {
        Occasion::Routine => Recheck::Kept,
        Occasion::Requested => Recheck::Always,
    };
    let digest = look.digest(&tag, recheck).await?;
    Ok(Artifact::image(watch.repo.clone(), tag, digest))
}
