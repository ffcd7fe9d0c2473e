//! An artifact's content: a directory as a deterministic gzip-compressed GNU tar, and
//! back (spec controller.md §5.12).
//!
//! Packing walks the directory in lexical order (by the bytes of each name, depth
//! first, a directory before its contents), writes every directory as mode 0755 and
//! every regular file as 0644, owned by uid/gid 0 with empty owner names, all with the
//! one modification time the caller gives (the Passage's start), and skips symbolic
//! links and anything else that is neither a file nor a directory. The gzip header's
//! own time is 0 and its OS byte 255 ("unknown"), as Go's writer leaves them, so the
//! same directory and time make the same bytes — the same digest — on any machine
//! running this build.
//!
//! Unpacking takes regular files and directories only, refuses an entry that is
//! absolute or climbs out of the destination, skips the archive's root entry (`.`,
//! `./`: Flux writes one) and refuses a file over [`MAX_FILE`], an archive that unpacks
//! to more than [`MAX_UNPACKED`] or holds more than [`MAX_ENTRIES`] entries. Symbolic
//! and hard links are skipped, never created, so no later entry can be written through
//! one to a place outside the destination.
//!
//! Everything here is blocking file work: the steps run it on `spawn_blocking`.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use flate2::Compression;
use sha2::{Digest as _, Sha256};

/// The largest file unpacked.
pub const MAX_FILE: u64 = 64 * 1024 * 1024;

/// The most bytes unpacked from one archive, all files together (1 GiB): gzip shrinks
/// repeated bytes a thousandfold, so a small layer could otherwise fill the disk.
pub const MAX_UNPACKED: u64 = 1024 * 1024 * 1024;

/// The most entries unpacked from one archive (files and directories).
pub const MAX_ENTRIES: usize = 100_000;

/// What one unpacking may write.
#[derive(Clone, Copy, Debug)]
struct Limits {
    file: u64,
    total: u64,
    entries: usize,
}

const LIMITS: Limits = Limits {
    file: MAX_FILE,
    total: MAX_UNPACKED,
    entries: MAX_ENTRIES,
};

/// Mode of every directory written, packed or unpacked.
const DIR_MODE: u32 = 0o755;
/// Mode of every file packed (and unpacked, unless the archive marks it executable).
const FILE_MODE: u32 = 0o644;

/// What packing wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packed {
    /// The compressed archive's `sha256:` digest.
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
    /// How many regular files it holds.
    pub files: usize,
}

/// Packs directory `dir` into `out` as a gzip-compressed GNU tar whose every entry has
/// modification time `mtime` (seconds since the epoch).
pub fn pack(dir: &Path, mtime: u64, out: impl Write) -> Result<Packed, String> {
    let mut entries = Vec::new();
    walk(dir, Path::new(""), &mut entries)?;
    let hashing = Hashing {
        inner: BufWriter::new(out),
        hasher: Sha256::new(),
        size: 0,
    };
    let gzip = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(hashing, Compression::default());
    let mut tar = tar::Builder::new(gzip);
    let mut files = 0;
    for (relative, kind) in &entries {
        let mut header = tar::Header::new_gnu();
        header.set_uid(0);
        header.set_gid(0);
        header.set_username("").map_err(|e| e.to_string())?;
        header.set_groupname("").map_err(|e| e.to_string())?;
        header.set_mtime(mtime);
        let written = match kind {
            Kind::Dir => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(DIR_MODE);
                header.set_size(0);
                let mut name = relative.as_os_str().to_owned();
                name.push("/");
                tar.append_data(&mut header, Path::new(&name), io::empty())
            }
            Kind::File => {
                let path = dir.join(relative);
                let file = File::open(&path).map_err(|e| format!("reading {relative:?}: {e}"))?;
                let size = file
                    .metadata()
                    .map_err(|e| format!("reading {relative:?}: {e}"))?
                    .len();
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(FILE_MODE);
                header.set_size(size);
                let mut counted = Counted {
                    inner: file.take(size),
                    count: 0,
                };
                let written = tar.append_data(&mut header, relative, &mut counted);
                if written.is_ok() && counted.count != size {
                    return Err(format!("{relative:?} changed while it was being packed"));
                }
                files += 1;
                written
            }
        };
        written.map_err(|e| format!("packing {relative:?}: {e}"))?;
    }
    let gzip = tar.into_inner().map_err(|e| format!("packing: {e}"))?;
    let hashing = gzip.finish().map_err(|e| format!("compressing: {e}"))?;
    let Hashing {
        mut inner,
        hasher,
        size,
    } = hashing;
    inner
        .flush()
        .map_err(|e| format!("writing the archive: {e}"))?;
    Ok(Packed {
        digest: format!("sha256:{}", hex::encode(hasher.finalize())),
        size,
        files,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Dir,
    File,
}

/// Everything below `root.join(relative)` that is packed, in lexical order.
fn walk(root: &Path, relative: &Path, entries: &mut Vec<(PathBuf, Kind)>) -> Result<(), String> {
    let here = root.join(relative);
    let mut names = std::fs::read_dir(&here)
        .and_then(|dir| {
            dir.map(|entry| entry.map(|e| e.file_name()))
                .collect::<io::Result<Vec<_>>>()
        })
        .map_err(|e| format!("reading directory {relative:?}: {e}"))?;
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    for name in names {
        let path = relative.join(&name);
        let metadata = std::fs::symlink_metadata(root.join(&path))
            .map_err(|e| format!("reading {path:?}: {e}"))?;
        let kind = metadata.file_type();
        if kind.is_dir() {
            entries.push((path.clone(), Kind::Dir));
            walk(root, &path, entries)?;
        } else if kind.is_file() {
            entries.push((path, Kind::File));
        }
        // Symbolic links, sockets, devices and pipes are not content.
    }
    Ok(())
}

/// A writer that hashes and counts what passes through it.
struct Hashing<W> {
    inner: W,
    hasher: Sha256,
    size: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(buf)?;
        self.hasher.update(&buf[..written]);
        self.size += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A reader that counts what it read.
struct Counted<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.count += read as u64;
        Ok(read)
    }
}

/// Unpacks the gzip-compressed tar `archive` into directory `out`, which exists; the
/// number of regular files written. At most [`MAX_FILE`] a file, [`MAX_UNPACKED`] in
/// all and [`MAX_ENTRIES`] entries.
pub fn unpack(archive: impl Read, out: &Path) -> Result<usize, String> {
    unpack_within(archive, out, LIMITS)
}

fn unpack_within(archive: impl Read, out: &Path, limits: Limits) -> Result<usize, String> {
    let gzip = flate2::read::GzDecoder::new(BufReader::new(archive));
    let mut tar = tar::Archive::new(gzip);
    let mut files = 0;
    let mut written = 0u64;
    let entries = tar
        .entries()
        .map_err(|e| format!("reading the archive: {e}"))?;
    for (seen, entry) in entries.enumerate() {
        if seen >= limits.entries {
            return Err(format!(
                "the archive has more than {} entries",
                limits.entries
            ));
        }
        let mut entry = entry.map_err(|e| format!("reading the archive: {e}"))?;
        let name = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&name).into_owned();
        let Some(relative) = entry_path(&name)? else {
            continue;
        };
        let target = out.join(&relative);
        let header = entry.header();
        let kind = header.entry_type();
        let mode = header.mode().unwrap_or(FILE_MODE);
        let size = header.size().unwrap_or(0);
        if kind.is_dir() {
            std::fs::create_dir_all(&target)
                .and_then(|()| {
                    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(DIR_MODE))
                })
                .map_err(|e| format!("unpacking {shown:?}: {e}"))?;
            continue;
        }
        if !(kind.is_file() || kind.is_contiguous()) {
            // Links and special files are not content (oci-push never writes them).
            continue;
        }
        if size > limits.file {
            return Err(too_big(&shown, limits.file));
        }
        let room = limits.total - written;
        if size > room {
            return Err(too_much(limits.total));
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("unpacking {shown:?}: {e}"))?;
        }
        let mut file = File::create(&target).map_err(|e| format!("unpacking {shown:?}: {e}"))?;
        let cap = limits.file.min(room);
        let copied = io::copy(&mut (&mut entry).take(cap + 1), &mut file)
            .map_err(|e| format!("unpacking {shown:?}: {e}"))?;
        if copied > limits.file {
            return Err(too_big(&shown, limits.file));
        }
        if copied > room {
            return Err(too_much(limits.total));
        }
        written += copied;
        let mode = if mode & 0o111 != 0 {
            DIR_MODE
        } else {
            FILE_MODE
        };
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("unpacking {shown:?}: {e}"))?;
        files += 1;
    }
    Ok(files)
}

fn too_big(name: &str, limit: u64) -> String {
    format!(
        "archive entry {name:?} is larger than {}",
        hecate_sources::oci::client::size(limit)
    )
}

fn too_much(limit: u64) -> String {
    format!(
        "the archive unpacks to more than {}",
        hecate_sources::oci::client::size(limit)
    )
}

/// Where archive entry `name` goes below the destination: `None` for the archive's
/// root entry. An absolute entry, or one that climbs above the destination through
/// `..`, is refused; one whose `..` stays inside is read as the path it reaches
/// (nothing unpacked is a symbolic link, so the text is the truth).
pub fn entry_path(name: &[u8]) -> Result<Option<PathBuf>, String> {
    let shown = || String::from_utf8_lossy(name).into_owned();
    if name.first() == Some(&b'/') {
        return Err(format!("archive entry {:?} is an absolute path", shown()));
    }
    let mut parts: Vec<&[u8]> = Vec::new();
    for part in name.split(|b| *b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                if parts.pop().is_none() {
                    return Err(format!(
                        "archive entry {:?} leads out of the destination",
                        shown()
                    ));
                }
            }
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        parts
            .iter()
            .map(|part| OsStr::from_bytes(part))
            .collect::<PathBuf>(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small tree: nested directories, an empty one, an executable file (packed as
    /// 0644 all the same), a symbolic link (skipped), names that sort by bytes.
    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path();
        std::fs::create_dir_all(root.join("b/c")).expect("mkdir");
        std::fs::create_dir_all(root.join("empty")).expect("mkdir");
        std::fs::write(root.join("a.yaml"), "a: 1\n").expect("write");
        std::fs::write(root.join("B.txt"), "upper\n").expect("write");
        std::fs::write(root.join("b/c/deep.yaml"), "deep: true\n").expect("write");
        std::fs::write(root.join("b.txt"), "after b/\n").expect("write");
        std::fs::write(root.join("run.sh"), "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        std::os::unix::fs::symlink("/etc/passwd", root.join("link")).expect("symlink");
        dir
    }

    fn packed(dir: &Path, mtime: u64) -> (Vec<u8>, Packed) {
        let mut bytes = Vec::new();
        let packed = pack(dir, mtime, &mut bytes).expect("packs");
        (bytes, packed)
    }

    #[test]
    fn the_same_tree_and_time_make_the_same_bytes() {
        let one = tree();
        let two = tree();
        // Different modes and times on disk change nothing.
        std::fs::set_permissions(
            two.path().join("a.yaml"),
            std::fs::Permissions::from_mode(0o600),
        )
        .expect("chmod");
        let (bytes_one, packed_one) = packed(one.path(), 1_700_000_000);
        let (bytes_two, packed_two) = packed(two.path(), 1_700_000_000);
        assert_eq!(bytes_one, bytes_two);
        assert_eq!(packed_one, packed_two);
        assert_eq!(packed_one.files, 5);
        assert_eq!(packed_one.size, bytes_one.len() as u64);
        assert_eq!(
            packed_one.digest,
            hecate_sources::oci::sha256_digest(&bytes_one)
        );

        let (_, later) = packed(one.path(), 1_700_000_001);
        assert_ne!(
            later.digest, packed_one.digest,
            "the time is part of the content"
        );
        std::fs::write(one.path().join("a.yaml"), "a: 2\n").expect("write");
        let (_, changed) = packed(one.path(), 1_700_000_000);
        assert_ne!(changed.digest, packed_one.digest);
    }

    #[test]
    fn entries_are_lexical_normalised_and_links_skipped() {
        let dir = tree();
        let (bytes, _) = packed(dir.path(), 1_700_000_000);
        // The gzip header: magic, deflate, no flags, mtime 0, then XFL and OS 255.
        assert_eq!(&bytes[..8], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0]);
        assert_eq!(bytes[9], 255);

        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
        let mut seen = Vec::new();
        for entry in archive.entries().expect("entries") {
            let entry = entry.expect("an entry");
            let header = entry.header();
            assert!(header.as_gnu().is_some(), "GNU format");
            assert_eq!((header.uid().ok(), header.gid().ok()), (Some(0), Some(0)));
            assert_eq!(header.username_bytes(), Some(&b""[..]));
            assert_eq!(header.groupname_bytes(), Some(&b""[..]));
            assert_eq!(header.mtime().ok(), Some(1_700_000_000));
            seen.push((
                String::from_utf8_lossy(&entry.path_bytes()).into_owned(),
                header.mode().expect("a mode"),
            ));
        }
        let expected = [
            ("B.txt", 0o644),
            ("a.yaml", 0o644),
            ("b/", 0o755),
            ("b/c/", 0o755),
            ("b/c/deep.yaml", 0o644),
            ("b.txt", 0o644),
            ("empty/", 0o755),
            ("run.sh", 0o644),
        ];
        let expected: Vec<(String, u32)> =
            expected.iter().map(|(n, m)| (n.to_string(), *m)).collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn long_names_round_trip() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let long = format!("{}/{}.yaml", "d".repeat(120), "f".repeat(120));
        std::fs::create_dir_all(dir.path().join("d".repeat(120))).expect("mkdir");
        std::fs::write(dir.path().join(&long), "long\n").expect("write");
        let (bytes, packed) = packed(dir.path(), 0);
        assert_eq!(packed.files, 1);
        let out = tempfile::tempdir().expect("a temporary directory");
        assert_eq!(unpack(bytes.as_slice(), out.path()), Ok(1));
        assert_eq!(
            std::fs::read_to_string(out.path().join(&long)).expect("read"),
            "long\n"
        );
    }

    #[test]
    fn a_round_trip_keeps_content_and_normalises_modes() {
        let dir = tree();
        let (bytes, _) = packed(dir.path(), 1_700_000_000);
        let out = tempfile::tempdir().expect("a temporary directory");
        assert_eq!(unpack(bytes.as_slice(), out.path()), Ok(5));
        let mode = |p: &str| {
            std::fs::metadata(out.path().join(p))
                .expect("unpacked")
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(
            std::fs::read_to_string(out.path().join("b/c/deep.yaml")).expect("read"),
            "deep: true\n"
        );
        assert_eq!(
            (mode("a.yaml"), mode("run.sh"), mode("b/c"), mode("empty")),
            (0o644, 0o644, 0o755, 0o755)
        );
        assert!(!out.path().join("link").exists());
    }

    #[test]
    fn entry_paths_stay_inside() {
        let inside = |name: &str| entry_path(name.as_bytes());
        assert_eq!(inside("a/b.yaml"), Ok(Some(PathBuf::from("a/b.yaml"))));
        assert_eq!(inside("./a/b.yaml"), Ok(Some(PathBuf::from("a/b.yaml"))));
        assert_eq!(inside("a//b/"), Ok(Some(PathBuf::from("a/b"))));
        assert_eq!(inside("a/../b"), Ok(Some(PathBuf::from("b"))));
        for root in [".", "./", "", "a/.."] {
            assert_eq!(inside(root), Ok(None), "{root:?} is the root entry");
        }
        for (bad, words) in [
            ("/etc/passwd", "absolute"),
            ("../x", "leads out"),
            ("./../x", "leads out"),
            ("a/../../x", "leads out"),
            ("..", "leads out"),
        ] {
            let why = inside(bad).expect_err(bad);
            assert!(why.contains(words), "{bad}: {why}");
        }
    }

    /// A gzip-compressed tar of raw entries: `(name, type, mode, content)`, names
    /// written as they are (the tar crate refuses to build such archives itself).
    fn raw_archive(entries: &[(&str, tar::EntryType, u32, &[u8])]) -> Vec<u8> {
        let gzip = flate2::write::GzEncoder::new(Vec::new(), Compression::default());
        let mut tar = tar::Builder::new(gzip);
        for (name, kind, mode, content) in entries {
            let mut header = tar::Header::new_gnu();
            let slot = &mut header.as_old_mut().name;
            slot[..name.len()].copy_from_slice(name.as_bytes());
            header.set_entry_type(*kind);
            header.set_mode(*mode);
            header.set_size(content.len() as u64);
            if kind.is_symlink() {
                header.set_link_name("/etc").expect("a link name");
            }
            header.set_cksum();
            tar.append(&header, *content).expect("append");
        }
        tar.into_inner().expect("tar").finish().expect("gzip")
    }

    #[test]
    fn unpacking_refuses_escapes_and_skips_links() {
        use tar::EntryType::{Directory, Regular, Symlink};
        for (name, words) in [("../evil", "leads out"), ("/tmp/evil", "absolute")] {
            let archive = raw_archive(&[
                ("./", Directory, 0o755, b""),
                ("ok.yaml", Regular, 0o644, b"ok\n"),
                (name, Regular, 0o644, b"evil\n"),
            ]);
            let out = tempfile::tempdir().expect("a temporary directory");
            let why = unpack(archive.as_slice(), out.path()).expect_err(name);
            assert!(why.contains(words), "{name}: {why}");
        }

        let archive = raw_archive(&[
            (".", Directory, 0o755, b""),
            ("etc", Symlink, 0o777, b""),
            ("etc/passwd", Regular, 0o644, b"mine\n"),
            ("bin/tool", Regular, 0o700, b"#!/bin/sh\n"),
        ]);
        let out = tempfile::tempdir().expect("a temporary directory");
        assert_eq!(unpack(archive.as_slice(), out.path()), Ok(2));
        let etc = std::fs::symlink_metadata(out.path().join("etc")).expect("etc");
        assert!(
            etc.is_dir(),
            "the link was skipped; etc is a plain directory"
        );
        let tool = std::fs::metadata(out.path().join("bin/tool")).expect("tool");
        assert_eq!(tool.permissions().mode() & 0o777, 0o755, "executable kept");
    }

    #[test]
    fn unpacking_refuses_a_file_over_the_cap() {
        // Refused on its header, before a byte of it is read (so none is written here).
        let archive = {
            let gzip = flate2::write::GzEncoder::new(Vec::new(), Compression::fast());
            let mut tar = tar::Builder::new(gzip);
            let mut header = tar::Header::new_gnu();
            header.set_path("big.bin").expect("a path");
            header.set_entry_type(tar::EntryType::Regular);
            header.set_mode(0o644);
            header.set_size(MAX_FILE + 1);
            header.set_cksum();
            tar.append(&header, io::empty()).expect("append");
            tar.into_inner().expect("tar").finish().expect("gzip")
        };
        let out = tempfile::tempdir().expect("a temporary directory");
        let why = unpack(archive.as_slice(), out.path()).expect_err("too big");
        assert!(why.contains("larger than 64 MiB"), "{why}");
        assert!(!out.path().join("big.bin").exists());
    }

    #[test]
    fn unpacking_stops_at_the_total_and_the_number_of_entries() {
        use tar::EntryType::{Directory, Regular};
        let archive = raw_archive(&[
            ("a", Regular, 0o644, &[b'a'; 600]),
            ("b", Regular, 0o644, &[b'b'; 600]),
        ]);
        let limits = Limits {
            file: 1000,
            total: 1000,
            entries: 10,
        };
        let out = tempfile::tempdir().expect("a temporary directory");
        let why = unpack_within(archive.as_slice(), out.path(), limits).expect_err("too much");
        assert_eq!(why, "the archive unpacks to more than 1000 bytes");
        let fits = Limits {
            total: 1200,
            ..limits
        };
        let out = tempfile::tempdir().expect("a temporary directory");
        assert_eq!(unpack_within(archive.as_slice(), out.path(), fits), Ok(2));

        let many: Vec<(String, tar::EntryType)> =
            (0..11).map(|i| (format!("d{i}/"), Directory)).collect();
        let many: Vec<(&str, tar::EntryType, u32, &[u8])> = many
            .iter()
            .map(|(name, kind)| (name.as_str(), *kind, 0o755, &b""[..]))
            .collect();
        let out = tempfile::tempdir().expect("a temporary directory");
        let why =
            unpack_within(raw_archive(&many).as_slice(), out.path(), limits).expect_err("too many");
        assert_eq!(why, "the archive has more than 10 entries");
    }

    #[test]
    fn what_is_not_a_gzip_tar_is_refused() {
        let out = tempfile::tempdir().expect("a temporary directory");
        assert!(unpack(&b"not gzip at all"[..], out.path()).is_err());
    }
}
