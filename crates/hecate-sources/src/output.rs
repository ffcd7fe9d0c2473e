//! A child process's output, read as a bounded stream (issue 50, DECISION 145): the
//! controller runs programs on what tenants control — git on their repositories,
//! kustomize and Helm on their checkouts — and whatever those print, it keeps at most
//! what its caller asked for, deciding while it reads rather than after. Every child
//! the controller starts is read through these (git in [`crate::git::Git`], the render
//! steps' programs in `hecate-steps`).
//!
//! Three ways to read, by what the caller needs: all of it up to a limit and a failure
//! beyond ([`read_all`]); only the end, for a failure message ([`read_tail`]); or
//! separated fields, each kept up to a length and the rest dropped unread into memory
//! ([`read_fields`]), for output whose total size is the repository's to choose.

use std::io::ErrorKind;

use tokio::io::{AsyncRead, AsyncReadExt as _};

/// How much is read at a time.
const CHUNK: usize = 64 << 10;

/// All of `from` up to `limit` bytes. More is an error of kind `FileTooLarge`
/// ([`is_too_much`]), returned as soon as the limit is passed: the caller stops the
/// program.
pub async fn read_all<R: AsyncRead + Unpin>(
    from: Option<R>,
    limit: usize,
) -> std::io::Result<Vec<u8>> {
    let Some(from) = from else {
        return Ok(Vec::new());
    };
    let mut bytes = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    from.take(cap).read_to_end(&mut bytes).await?;
    if bytes.len() > limit {
        return Err(std::io::Error::new(
            ErrorKind::FileTooLarge,
            "too much output",
        ));
    }
    Ok(bytes)
}

/// Whether `error` is [`read_all`]'s "more than the limit".
pub fn is_too_much(error: &std::io::Error) -> bool {
    error.kind() == ErrorKind::FileTooLarge
}

/// The last `limit` bytes of `from`, read to its end (so the program never blocks on a
/// full pipe).
pub async fn read_tail<R: AsyncRead + Unpin>(
    from: Option<R>,
    limit: usize,
) -> std::io::Result<Vec<u8>> {
    let Some(mut from) = from else {
        return Ok(Vec::new());
    };
    let mut kept = Vec::new();
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let read = from.read(&mut chunk).await?;
        if read == 0 {
            return Ok(kept);
        }
        kept.extend_from_slice(&chunk[..read]);
        if kept.len() > 2 * limit {
            kept.drain(..kept.len() - limit);
        }
    }
}

/// One field of a separated stream, as [`read_fields`] hands it over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    /// Its first bytes, at most the `keep` asked for.
    pub bytes: &'a [u8],
    /// Whether it was longer, and the rest dropped.
    pub cut: bool,
}

/// Reads `from` to its end as fields, each ended by `separator` (a last one without
/// it counts too), and hands each to `each` with at most `keep` of its bytes: the rest
/// of a field is read and dropped, so a field of any length costs `keep` bytes and the
/// whole output no more than one field.
pub async fn read_fields<R: AsyncRead + Unpin>(
    from: Option<R>,
    separator: u8,
    keep: usize,
    each: &mut (dyn FnMut(Field<'_>) + Send),
) -> std::io::Result<()> {
    let Some(mut from) = from else {
        return Ok(());
    };
    let mut field: Vec<u8> = Vec::with_capacity(keep.min(CHUNK));
    let mut cut = false;
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let read = from.read(&mut chunk).await?;
        if read == 0 {
            if !field.is_empty() || cut {
                each(Field { bytes: &field, cut });
            }
            return Ok(());
        }
        let mut rest = &chunk[..read];
        while !rest.is_empty() {
            let end = rest.iter().position(|b| *b == separator);
            let piece = &rest[..end.unwrap_or(rest.len())];
            let room = keep.saturating_sub(field.len());
            field.extend_from_slice(&piece[..piece.len().min(room)]);
            cut |= piece.len() > room;
            match end {
                Some(end) => {
                    each(Field { bytes: &field, cut });
                    field.clear();
                    cut = false;
                    rest = &rest[end + 1..];
                }
                None => rest = &[],
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields `read_fields` hands over for `input`, as `(text, cut)`.
    async fn fields(input: &[u8], keep: usize) -> Vec<(String, bool)> {
        let mut seen = Vec::new();
        read_fields(Some(input), 0, keep, &mut |f: Field<'_>| {
            seen.push((String::from_utf8_lossy(f.bytes).into_owned(), f.cut));
        })
        .await
        .expect("read");
        seen
    }

    #[tokio::test]
    async fn fields_are_kept_up_to_their_length() {
        assert_eq!(
            fields(b"\0abc\0abcdef\0\0last", 4).await,
            [
                (String::new(), false),
                ("abc".into(), false),
                ("abcd".into(), true),
                (String::new(), false),
                ("last".into(), false),
            ]
        );
        // A field spanning many chunks costs `keep` bytes; nothing after the last
        // separator is no field.
        let long = [b"x".repeat(5 * CHUNK + 7), b"\0y\0".to_vec()].concat();
        assert_eq!(
            fields(&long, 3).await,
            [("xxx".into(), true), ("y".into(), false)]
        );
        assert_eq!(fields(b"", 3).await, []);
    }

    #[tokio::test]
    async fn all_of_it_or_too_much() {
        let bytes = read_all(Some(&b"twelve bytes"[..]), 12)
            .await
            .expect("read");
        assert_eq!(bytes, b"twelve bytes");
        let error = read_all(Some(&b"thirteen byte"[..]), 12)
            .await
            .expect_err("too much");
        assert!(is_too_much(&error), "{error}");
        let said: Vec<u8> = (0..200_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let tail = read_tail(Some(&said[..]), 1000).await.expect("read");
        assert!(tail.len() >= 1000 && tail.len() <= 2000, "{}", tail.len());
        assert!(said.ends_with(&tail));
    }
}
