// Server-sent events over fetch(). EventSource cannot send an Authorization header,
// so this reads the stream itself: a small parser for the text/event-stream format,
// reconnecting with backoff when the connection drops or the server says `reconnect`
// (it does every 30 minutes, so the caller is authorised again).

/** Parses text/event-stream chunks; calls `dispatch({event, data})` per event. */
export function parser(dispatch) {
  let buffer = "";
  let event = "";
  let data = [];
  const line = (text) => {
    if (text === "") {
      if (data.length || event) dispatch({ event: event || "message", data: data.join("\n") });
      event = "";
      data = [];
      return;
    }
    if (text.startsWith(":")) return; // a comment: the server's keep-alive ping
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  };
  return (chunk) => {
    buffer += chunk;
    // Lines end in \n, \r\n or \r; a \r at the very end may be half of a \r\n.
    for (;;) {
      const match = /\r\n|\n|\r(?!$)/.exec(buffer);
      if (!match) break;
      line(buffer.slice(0, match.index));
      buffer = buffer.slice(match.index + match[0].length);
    }
  };
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Follows `url` until `close()`: `onEvent({event, data})` per event, `onState(state)`
 * with "connecting", "live", "reconnecting", "denied" (403/404: no point retrying) or
 * "unauthenticated" (401: the session is over).
 */
export function follow(url, token, { onEvent, onState }) {
  const stop = new AbortController();
  let backoff = 1000;
  (async () => {
    onState("connecting");
    while (!stop.signal.aborted) {
      const attempt = new AbortController();
      const abort = () => attempt.abort();
      stop.signal.addEventListener("abort", abort);
      let again = false;
      try {
        const response = await fetch(url, {
          // No token: signed in through the identity provider, the cookie carries it.
          headers: token ? { Authorization: `Bearer ${token}`, Accept: "text/event-stream" } : { Accept: "text/event-stream" },
          signal: attempt.signal,
          credentials: token ? "omit" : "same-origin",
          cache: "no-store",
        });
        if (response.status === 401) {
          onState("unauthenticated");
          return;
        }
        if (response.status === 403 || response.status === 404) {
          onState("denied");
          return;
        }
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        const feed = parser((message) => {
          if (message.event === "open") {
            backoff = 1000;
            onState("live");
          } else if (message.event === "reconnect") {
            again = true;
            attempt.abort();
          }
          onEvent(message);
        });
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          feed(value);
        }
      } catch {
        // A dropped connection, or our own abort: either way, decided below.
      } finally {
        stop.signal.removeEventListener("abort", abort);
      }
      if (stop.signal.aborted) return;
      if (again) continue; // the server asked: straight back, authorised afresh
      onState("reconnecting");
      // Jitter, so a restarted server is not met by every tab at once.
      await sleep(backoff + Math.random() * 500, stop.signal);
      backoff = Math.min(backoff * 2, 30000);
    }
  })();
  return { close: () => stop.abort() };
}
