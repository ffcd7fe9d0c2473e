//! What each image is: one description, which the assembly follows and which the
//! tests hold the Dockerfile and the Helm chart's values to.

/// Where every image keeps its programs.
pub(crate) const BIN_DIR: &str = "/usr/local/bin";
/// The user every image runs as: distroless's `nonroot`.
pub(crate) const NONROOT: u32 = 65532;
/// `nonroot`'s home, where git and helm keep what they write.
pub(crate) const HOME: &str = "/home/nonroot";

/// One of the images the Helm chart runs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Image {
    /// The image's name, its binary's, and its stage's in the Dockerfile.
    pub name: &'static str,
    /// What it starts from.
    pub base: Base,
    /// Debian packages it needs beyond its base: `apt-get install`ed in the Dockerfile.
    pub packages: &'static [&'static str],
    /// Whether `kustomize` and `helm` (the render steps' programs) are on its PATH.
    pub tools: bool,
    /// The ports it listens on (`EXPOSE`; the chart's values name the same).
    pub ports: &'static [u16],
    /// The arguments that make it serve `/readyz` on `127.0.0.1:{port}` once it has
    /// reached its cluster; `None` for an image whose readiness is not checked.
    pub serves_readyz: Option<&'static [&'static str]>,
}

/// The base an image starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    /// Distroless `cc`: the C and GCC runtime libraries, the CA certificates, no shell.
    /// What a Rust binary built with rustls needs.
    Distroless,
    /// Debian slim: Debian's essential set, of which the controller needs the shell
    /// (git runs `GIT_SSH_COMMAND` with `/bin/sh`).
    DebianSlim,
}

impl Base {
    /// The Debian packages that stand for the base when an image is assembled from
    /// packages: of the base image's contents, what the image's programs use.
    pub(crate) fn packages(self) -> &'static [&'static str] {
        match self {
            Base::Distroless => &["libc6", "libgcc-s1", "ca-certificates"],
            Base::DebianSlim => &["libc6", "libgcc-s1", "ca-certificates", "dash"],
        }
    }
}

/// The three images, in the order they are built.
pub(crate) const IMAGES: [Image; 3] = [
    Image {
        name: "hecate-api",
        base: Base::Distroless,
        packages: &[],
        tools: false,
        ports: &[8080],
        serves_readyz: Some(&["--addr=127.0.0.1:{port}"]),
    },
    Image {
        name: "hecate-mcp",
        base: Base::Distroless,
        packages: &[],
        tools: false,
        ports: &[8085],
        serves_readyz: None,
    },
    Image {
        name: "hecate-controller",
        base: Base::DebianSlim,
        packages: &["git", "openssh-client", "ca-certificates"],
        tools: true,
        ports: &[8080, 8081],
        serves_readyz: Some(&[
            "--health-probe-bind-address=127.0.0.1:{port}",
            "--metrics-bind-address=0",
            "--work-root=/tmp/hecate-passages",
        ]),
    },
];

impl Image {
    /// Every Debian package the assembled image is made of, before their dependencies.
    pub(crate) fn all_packages(&self) -> Vec<&'static str> {
        let mut all: Vec<&'static str> = self.base.packages().to_vec();
        for package in self.packages {
            if !all.contains(package) {
                all.push(package);
            }
        }
        all
    }

    /// The binary's path in the image, which is also its entrypoint.
    pub(crate) fn entrypoint(&self) -> String {
        format!("{BIN_DIR}/{}", self.name)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use super::*;

    /// One stage of a Dockerfile: its base, its name, and its instructions (keyword,
    /// arguments), continuation lines joined.
    #[derive(Debug)]
    struct Stage {
        from: String,
        name: String,
        instructions: Vec<(String, String)>,
    }

    impl Stage {
        fn all(&self, keyword: &str) -> Vec<&str> {
            self.instructions
                .iter()
                .filter(|(k, _)| k == keyword)
                .map(|(_, args)| args.as_str())
                .collect()
        }
    }

    fn stages(dockerfile: &str) -> Vec<Stage> {
        let mut logical = Vec::new();
        let mut line = String::new();
        for raw in dockerfile.lines() {
            let trimmed = raw.trim();
            if trimmed.starts_with('#') || (trimmed.is_empty() && line.is_empty()) {
                continue;
            }
            match trimmed.strip_suffix('\\') {
                Some(part) => {
                    line.push_str(part);
                    line.push(' ');
                }
                None => {
                    line.push_str(trimmed);
                    logical.push(std::mem::take(&mut line));
                }
            }
        }
        let mut stages: Vec<Stage> = Vec::new();
        for line in logical.iter().filter(|line| !line.is_empty()) {
            let (keyword, args) = line.split_once(' ').unwrap_or((line, ""));
            let args = args.split_whitespace().collect::<Vec<_>>().join(" ");
            if keyword == "FROM" {
                let words: Vec<&str> = args.split(' ').collect();
                assert!(
                    words.len() == 3 && words[1] == "AS",
                    "every stage is named: FROM {args}"
                );
                stages.push(Stage {
                    from: words[0].to_string(),
                    name: words[2].to_string(),
                    instructions: Vec::new(),
                });
            } else {
                let stage = stages.last_mut().expect("FROM comes first");
                stage.instructions.push((keyword.to_string(), args));
            }
        }
        stages
    }

    /// The image the Dockerfile starts `base` from.
    fn dockerfile_image(base: Base) -> &'static str {
        match base {
            Base::Distroless => "gcr.io/distroless/cc-debian12:nonroot",
            Base::DebianSlim => "debian:bookworm-slim",
        }
    }

    fn root() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
    }

    #[test]
    fn the_dockerfile_describes_the_images_that_are_assembled() {
        let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
        let stages = stages(&dockerfile);
        let runtime: Vec<&Stage> = stages
            .iter()
            .filter(|stage| !["build", "tools"].contains(&stage.name.as_str()))
            .collect();
        let names: Vec<&str> = runtime.iter().map(|stage| stage.name.as_str()).collect();
        assert_eq!(names, IMAGES.map(|image| image.name), "the images' stages");

        for (image, stage) in IMAGES.iter().zip(runtime) {
            let name = image.name;
            assert_eq!(stage.from, dockerfile_image(image.base), "{name}'s base");
            assert_eq!(
                stage.all("ENTRYPOINT"),
                [format!("[\"{}\"]", image.entrypoint())],
                "{name}'s entrypoint"
            );
            assert!(
                stage.all("COPY").contains(
                    &format!(
                        "--from=build /src/target/release/{name} {}",
                        image.entrypoint()
                    )
                    .as_str()
                ),
                "{name}'s binary is copied to its entrypoint"
            );
            let exposed: Vec<u16> = stage
                .all("EXPOSE")
                .iter()
                .flat_map(|ports| ports.split(' '))
                .map(|port| port.parse().unwrap())
                .collect();
            assert_eq!(exposed, image.ports, "{name}'s ports");

            // Distroless's `:nonroot` tag runs as 65532; another base says so itself.
            let users = stage.all("USER");
            match image.base {
                Base::Distroless => {
                    assert!(dockerfile_image(image.base).ends_with(":nonroot"));
                    assert!(users.is_empty(), "{name} keeps distroless's user");
                }
                Base::DebianSlim => {
                    assert_eq!(users, [format!("{NONROOT}:{NONROOT}")], "{name}'s user");
                    let runs = stage.all("RUN").join(" ");
                    assert!(
                        runs.contains(&format!("--uid {NONROOT}"))
                            && runs.contains(&format!("--home-dir {HOME}")),
                        "{name} has a passwd entry for its user (ssh refuses to run \
                         without one): {runs}"
                    );
                }
            }

            let installed: Vec<&str> = stage
                .all("RUN")
                .iter()
                .filter_map(|run| run.split("--no-install-recommends ").nth(1))
                .flat_map(|rest| rest.split(" && ").next().unwrap_or("").split(' '))
                .filter(|word| !word.is_empty())
                .collect();
            assert_eq!(installed, image.packages, "{name}'s Debian packages");

            let tools = stage.all("COPY").contains(
                &format!("--from=tools /tools/kustomize /tools/helm {BIN_DIR}/").as_str(),
            );
            assert_eq!(
                tools, image.tools,
                "whether {name} carries kustomize and helm"
            );
        }
    }

    #[test]
    fn the_chart_runs_the_images_on_their_ports() {
        let values: serde_yaml_ng::Value = serde_yaml_ng::from_str(
            &std::fs::read_to_string(root().join("charts/hecate/values.yaml")).unwrap(),
        )
        .unwrap();
        let component = |key: &str| &values[key];
        let port = |key: &str, field: &str| {
            u16::try_from(component(key)[field].as_u64().unwrap()).unwrap()
        };
        let chart: BTreeMap<&str, (String, Vec<u16>)> = [
            ("hecate-api", "api", vec![port("api", "port")]),
            ("hecate-mcp", "mcp", vec![port("mcp", "port")]),
            (
                "hecate-controller",
                "controller",
                vec![
                    port("controller", "metricsPort"),
                    port("controller", "probesPort"),
                ],
            ),
        ]
        .into_iter()
        .map(|(image, key, ports)| {
            let repository = component(key)["image"]["repository"]
                .as_str()
                .unwrap()
                .to_string();
            (image, (repository, ports))
        })
        .collect();
        for image in IMAGES {
            let (repository, ports) = &chart[image.name];
            assert!(
                repository.ends_with(&format!("/{}", image.name)),
                "the chart runs {repository} for {}",
                image.name
            );
            assert_eq!(ports, image.ports, "{}'s ports in the chart", image.name);
        }
    }

    #[test]
    fn an_image_is_its_base_and_its_own_packages_once_each() {
        let controller = IMAGES[2];
        assert_eq!(
            controller.all_packages(),
            [
                "libc6",
                "libgcc-s1",
                "ca-certificates",
                "dash",
                "git",
                "openssh-client"
            ]
        );
        assert_eq!(controller.entrypoint(), "/usr/local/bin/hecate-controller");
    }
}
