// One session's connection to its event log. Turns run on the server whatever the browser does;
// this follows them: the POST that sent a message streams its own turn, GET .../events?since=N
// re-attaches (after a reload, a dropped connection, or to follow queued turns). Event ids grow
// monotonically per server, so events seen twice (two overlapping streams) are dropped by id.
import { readSSE } from "./sse.js";
import { eventMarks } from "./prefs.js";

const RETRY_DELAYS = [500, 1000, 2000, 4000, 8000];

export class SessionStream {
  constructor(api, sessionId, handlers) {
    this.api = api;
    this.sessionId = sessionId;
    this.handlers = handlers; // {event(ev), connected(bool), ended(session | null, error?)}
    this.marks = eventMarks.get(sessionId) || { turn: null, base: null, last: 0 };
    this.controller = null;
    this.closed = false;
    this.failures = 0;
  }

  get connected() {
    return this.controller !== null;
  }

  deliver(event) {
    if (event.id !== null && event.id !== undefined) {
      if (event.id <= this.marks.last) return;
      this.marks.last = event.id;
      if (event.event === "start") {
        this.marks.turn = event.data.turn;
        this.marks.base = event.id - 1;
      }
      eventMarks.set(this.sessionId, this.marks);
    }
    this.failures = 0;
    this.handlers.event(event);
  }

  // Take over the stream a POST .../messages answered with.
  async adopt(response, controller) {
    const events = readSSE(response.body);
    let first;
    try {
      first = await events.next();
    } catch {
      first = { done: true };
    }
    if (first.done) {
      controller.abort();
      if (!this.connected) this.follow(this.marks.last);
      return null;
    }
    const event = first.value;
    if (this.connected) {
      // Another connection follows the log and will bring this turn's events (or its end
      // catches up). Taking this event's id here could skip events that connection has yet
      // to deliver, so only a `queued` notice passes, without touching the marks.
      controller.abort();
      events.return().catch(() => {});
      if (event.event === "queued") this.handlers.event(event);
      return event;
    }
    this.deliver(event);
    if (event.event === "queued") {
      // the message waits behind a turn this page did not start: follow the log from here
      controller.abort();
      events.return().catch(() => {});
      this.follow(this.marks.last);
      return event;
    }
    this.run(controller, events, "post");
    return event;
  }

  // A new page: forget what an earlier page saw, replay from `since`.
  resume(since) {
    this.marks.last = since || 0;
    this.follow(since);
  }

  // Re-attach: replay the log after `since` (null: from the start of the running turn).
  async follow(since = null) {
    if (this.closed || this.connected) return;
    const controller = new AbortController();
    this.controller = controller;
    const query = since ? `?since=${encodeURIComponent(since)}` : "";
    const headers = since ? { "Last-Event-ID": String(since) } : {};
    let response;
    try {
      response = await this.api.fetch("GET", `/v1/sessions/${this.sessionId}/events${query}`, {
        headers,
        signal: controller.signal,
      });
    } catch (error) {
      if (this.controller === controller) this.controller = null;
      if (!controller.signal.aborted) this.retry(error);
      return;
    }
    this.controller = null;
    this.run(controller, readSSE(response.body), "follow");
  }

  // Deliver a stream's events; then catch up (a POST stream carries its own turn only) or,
  // after a follow, go on while the session is still busy.
  async run(controller, events, kind) {
    this.controller = controller;
    this.handlers.connected(true);
    let failed = null;
    let count = 0;
    try {
      for await (const event of events) {
        count += 1;
        this.deliver(event);
      }
    } catch (error) {
      if (!controller.signal.aborted) failed = error;
    } finally {
      if (this.controller === controller) this.controller = null;
      this.handlers.connected(false);
    }
    if (this.closed || controller.signal.aborted) return;
    if (failed) this.retry(failed);
    else if (kind === "post") this.follow(this.marks.last);
    else this.afterEnd(count);
  }

  // The stream ended: follow on while the session has more turns (queued messages).
  async afterEnd(count = 1) {
    let session = null;
    try {
      session = await this.api.get(`/v1/sessions/${this.sessionId}`);
    } catch (error) {
      if (error.status === 404) {
        this.handlers.ended(null);
        return;
      }
      this.retry(error);
      return;
    }
    if (this.closed) return;
    if (this.connected) return; // another stream took over
    if (!session.busy) {
      this.handlers.ended(session);
    } else if (count) {
      this.follow(this.marks.last);
    } else {
      // busy, yet the stream ended at once (the server is stopping?): not in a tight loop
      setTimeout(() => this.follow(this.marks.last), 1000);
    }
  }

  retry(error) {
    if (this.closed) return;
    if (error && error.status && error.status < 500 && error.status !== 429) {
      this.handlers.ended(null);
      return;
    }
    const delay = RETRY_DELAYS[this.failures];
    this.failures += 1;
    if (delay === undefined) {
      this.handlers.ended(null, error);
      return;
    }
    setTimeout(() => {
      if (!this.closed && !this.connected) this.afterEnd();
    }, delay);
  }

  close() {
    this.closed = true;
    if (this.controller) this.controller.abort();
    this.controller = null;
  }
}
