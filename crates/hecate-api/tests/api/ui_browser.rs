//! Headless Chromium for the UI tests, driven over WebDriver by chromedriver — Debian's
//! `chromium` and `chromium-driver`. Each test gets its own chromedriver (on a free
//! port, in its own process group so the browser goes with it) and its own session.
//!
//! Missing Chromium fails the test with how to install it: the UI is part of the
//! product, and a browser test that skips itself tests nothing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

/// How long any one expectation may take to come true.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// Where screenshots go: the workspace's `target/ui-screenshots/`.
pub(crate) fn screenshot_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/ui-screenshots"
    ))
}

/// The first of `names` on `PATH` (or the path in `$var`, when set).
fn program(var: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(var) {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|candidate| candidate.is_file())
}

fn missing(what: &str) -> ! {
    panic!(
        "the UI tests need headless Chromium and chromedriver, and {what} is not installed.\n\
         On Debian or Ubuntu: apt-get install -y chromium chromium-driver\n\
         (or point $CHROME and $CHROMEDRIVER at a Chromium and its matching chromedriver)"
    )
}

/// A browser session, its chromedriver, and the server it talks to.
pub(crate) struct Browser {
    pub(crate) client: Client,
    pub(crate) base: String,
    driver: Child,
}

impl Drop for Browser {
    fn drop(&mut self) {
        // chromedriver leads its own process group, Chromium included: end them all,
        // also when a test panicked before `close`.
        kill_group(self.driver.id());
        let _ = self.driver.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Browser {
    /// A fresh headless Chromium, 1280×900, pointed at `base` (nothing loaded yet).
    pub(crate) async fn start(base: &str) -> Self {
        Self::start_with(base, &[]).await
    }

    /// The same, with more Chromium flags (e.g. trusting a test server's own CA).
    pub(crate) async fn start_with(base: &str, extra: &[&str]) -> Self {
        let chromium = program("CHROME", &["chromium", "chromium-browser", "google-chrome"])
            .unwrap_or_else(|| missing("Chromium"));
        let chromedriver =
            program("CHROMEDRIVER", &["chromedriver"]).unwrap_or_else(|| missing("chromedriver"));
        let mut last_error = String::new();
        // A free port can be taken between asking and binding: try a few.
        for _ in 0..3 {
            let port = free_port();
            let mut command = Command::new(&chromedriver);
            command
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
            let driver = command
                .spawn()
                .unwrap_or_else(|e| panic!("starting {}: {e}", chromedriver.display()));
            let mut browser_driver = DriverGuard(Some(driver));
            let url = format!("http://127.0.0.1:{port}");
            match session(&url, &chromium, extra).await {
                Ok(client) => {
                    return Self {
                        client,
                        base: base.to_string(),
                        driver: browser_driver.take(),
                    };
                }
                Err(e) => last_error = e,
            }
        }
        panic!("could not start a Chromium session through chromedriver: {last_error}");
    }

    /// Ends the session (Chromium exits); the driver goes on drop.
    pub(crate) async fn close(self) {
        let _ = self.client.clone().close().await;
    }

    /// Loads `path` (e.g. `/gates/?name=production&namespace=x`) afresh.
    pub(crate) async fn open(&self, path: &str) {
        self.client
            .goto(&format!("{}{path}", self.base))
            .await
            .unwrap_or_else(|e| panic!("opening {path}: {e}"));
    }

    /// Runs `script` (a function body; `arguments[i]` are `args`) in the page.
    pub(crate) async fn js(&self, script: &str, args: Vec<Value>) -> Value {
        self.client
            .execute(script, args)
            .await
            .unwrap_or_else(|e| panic!("running {script:?}: {e}"))
    }

    /// Waits until the expression `expr` (evaluated in the page) is truthy, and
    /// returns its value; fails after [`PATIENCE`] naming `what` and what the page
    /// shows.
    pub(crate) async fn until(&self, what: &str, expr: &str) -> Value {
        let script = format!("try {{ return ({expr}); }} catch (e) {{ return null; }}");
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let value = self.js(&script, vec![]).await;
            let truthy = match &value {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::String(s) => !s.is_empty(),
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::Array(_) | Value::Object(_) => true,
            };
            if truthy {
                return value;
            }
            if tokio::time::Instant::now() > deadline {
                let page = self.page_text().await;
                panic!(
                    "{what}: not true within {PATIENCE:?} ({expr})\n--- the page shows:\n{page}"
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the element `css` exists and its text contains `needle`.
    pub(crate) async fn until_text(&self, css: &str, needle: &str) -> String {
        let expr = format!(
            "(() => {{ const el = document.querySelector({css}); return el && el.textContent.includes({needle}) ? el.textContent : null; }})()",
            css = json!(css),
            needle = json!(needle),
        );
        self.until(&format!("{css} shows {needle:?}"), &expr)
            .await
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The text of the header's notice, <main> and the footer.
    pub(crate) async fn page_text(&self) -> String {
        let value = self
            .client
            .execute(
                "return ['notice', 'main', 'live'].map(id => `[${id}] ` + ((document.getElementById(id) || {}).innerText || '')).join('\\n');",
                vec![],
            )
            .await;
        match value {
            Ok(Value::String(s)) => s,
            other => format!("{other:?}"),
        }
    }

    /// Clicks the element `css`.
    pub(crate) async fn click(&self, css: &str) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            self.until(
                &format!("{css} is there"),
                &format!("document.querySelector({})", json!(css)),
            )
            .await;
            let clicked = match self.client.find(Locator::Css(css)).await {
                Ok(element) => element.click().await.map(drop),
                Err(e) => Err(e),
            };
            match clicked {
                Ok(()) => return,
                // A live update redrew the page between finding and clicking, as it
                // may under a person's pointer too: find the new element.
                Err(e)
                    if e.to_string().contains("stale element")
                        && tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("clicking {css}: {e}"),
            }
        }
    }

    /// Presses `key` (text, or a `fantoccini::key::Key`) in whatever has focus.
    pub(crate) async fn press(&self, key: &str) {
        // Through WebDriver's keyboard, as a person types: to whatever has focus,
        // even when that is not an element WebDriver would call interactable, and
        // with no element reference a live update could make stale.
        use fantoccini::actions::{InputSource as _, KeyAction, KeyActions};
        let mut keys = KeyActions::new("keyboard".into());
        for value in key.chars() {
            keys = keys
                .then(KeyAction::Down { value })
                .then(KeyAction::Up { value });
        }
        self.client
            .perform_actions(keys)
            .await
            .unwrap_or_else(|e| panic!("pressing {key:?}: {e}"));
    }

    /// Signs in through the form with `token` and waits for a page to replace it.
    pub(crate) async fn sign_in(&self, token: &str) {
        self.until("the sign-in form", "document.querySelector('#token')")
            .await;
        let field = self.client.find(Locator::Css("#token")).await.unwrap();
        field.send_keys(token).await.unwrap();
        self.click(".sign-in button[type=submit]").await;
        self.until(
            "a page after signing in",
            "!document.querySelector('#token') && document.querySelector('main h1') && !document.querySelector('main[aria-busy]')",
        )
        .await;
    }

    /// A full-page screenshot to `target/ui-screenshots/<name>.png`, at `width`.
    pub(crate) async fn screenshot(&self, name: &str, width: u32) {
        // The page's height at the width photographed: a phone's is longer.
        self.client.set_window_size(width, 900).await.unwrap();
        let height = self
            .js("return document.documentElement.scrollHeight;", vec![])
            .await
            .as_u64()
            .unwrap_or(900)
            .clamp(400, 8000);
        // Headless windows have no browser chrome: the window is the viewport, so a
        // window as tall as the page photographs all of it.
        self.client
            .set_window_size(width, u32::try_from(height).unwrap())
            .await
            .unwrap();
        let png = self.client.screenshot().await.unwrap();
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
        self.client.set_window_size(1280, 900).await.unwrap();
    }
}

/// What the page's console said since the last time it was asked (chromedriver's
/// browser log): `[{level, message, timestamp}]`.
#[derive(Debug)]
struct ConsoleLog;

impl fantoccini::wd::WebDriverCompatibleCommand for ConsoleLog {
    fn endpoint(
        &self,
        base: &reqwest::Url,
        session: Option<&str>,
    ) -> Result<reqwest::Url, <reqwest::Url as std::str::FromStr>::Err> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &reqwest::Url) -> (axum::http::Method, Option<String>) {
        (
            axum::http::Method::POST,
            Some(json!({"type": "browser"}).to_string()),
        )
    }
}

impl Browser {
    /// The console's entries since it was last asked: errors a page logged, and every
    /// load that failed (a 404 included).
    pub(crate) async fn console(&self) -> Vec<Value> {
        match self.client.issue_cmd(ConsoleLog).await {
            Ok(Value::Array(entries)) => entries,
            other => panic!("reading the browser's console: {other:?}"),
        }
    }
}

/// SIGKILLs the process group `leader` leads. Through `pkill -g`, not `kill -KILL
/// -<pgid>`: procps-ng 4.0.2's `kill` reads that negative pid as -1 and signals every
/// process the user owns.
fn kill_group(leader: u32) {
    if leader == 0 {
        return; // `pkill -g 0` would mean our own group.
    }
    let _ = Command::new("pkill")
        .args(["-KILL", "-g", &leader.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// Kills a chromedriver that never became a session.
struct DriverGuard(Option<Child>);

impl DriverGuard {
    fn take(&mut self) -> Child {
        self.0.take().unwrap()
    }
}

impl Drop for DriverGuard {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            kill_group(child.id());
            let _ = child.wait();
        }
    }
}

/// A WebDriver session on chromedriver at `url`, waiting for it to listen.
async fn session(url: &str, chromium: &Path, extra: &[&str]) -> Result<Client, String> {
    let mut capabilities = json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": chromium,
            "args": [
                "--headless=new",
                // Tests run as root in containers, where Chromium's sandbox cannot start.
                "--no-sandbox",
                "--disable-dev-shm-usage",
                "--disable-gpu",
                "--window-size=1280,900",
                "--lang=en-GB",
                "--force-prefers-reduced-motion",
            ],
        },
        // What the page logs (errors, failed loads), for `Browser::console`.
        "goog:loggingPrefs": {"browser": "ALL"},
        // axe-core over a full page took over WebDriver's default 30 s on a loaded
        // machine (CI beside other builds); a script that truly hangs still fails.
        "timeouts": {"script": 120_000},
    });
    if let Some(args) = capabilities["goog:chromeOptions"]["args"].as_array_mut() {
        args.extend(extra.iter().map(|a| json!(a)));
    }
    let Value::Object(capabilities) = capabilities else {
        unreachable!()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        match ClientBuilder::new(connector)
            .capabilities(capabilities.clone())
            .connect(url)
            .await
        {
            Ok(client) => return Ok(client),
            Err(e) if tokio::time::Instant::now() > deadline => return Err(e.to_string()),
            // Not listening yet: chromedriver takes a moment to start.
            Err(
                fantoccini::error::NewSessionError::Lost(_)
                | fantoccini::error::NewSessionError::Failed(_)
                | fantoccini::error::NewSessionError::FailedC(_),
            ) => {}
            Err(e) => return Err(e.to_string()),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
