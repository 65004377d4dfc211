// One turn on screen: the user's message and the assistant's answer, built from UI events as they
// stream (or from stored messages). The answer is a list of segments in the order they happened:
// reasoning, text, tool cards (with the subagents a call runs: children.js), questions, notices.
import { h, icon, shortArguments } from "./dom.js";
import { Children, SUBAGENT_TOOLS } from "./children.js";
import { renderMarkdown } from "./markdown.js";
import { openLightbox } from "./attach.js";
import { QuestionCard } from "./questions.js";

const PREVIEW_CHARS = 2000;

function prettyArguments(raw) {
  if (typeof raw !== "string") return JSON.stringify(raw, null, 2);
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

function clip(text) {
  if (!text || text.length <= PREVIEW_CHARS) return text || "";
  return `${text.slice(0, PREVIEW_CHARS)}\n… [${text.length - PREVIEW_CHARS} more characters]`;
}

export class TurnView {
  // answer(questionId, text) -> Promise: how this turn's questions are answered (live turns only)
  constructor(turnId = "", { answer = null } = {}) {
    this.id = turnId;
    this.answerQuestion = answer;
    this.questions = new Map();
    this.el = h("section", { class: "turn", dataset: { turn: turnId } });
    this.user = null;
    this.answer = null;
    this.segments = [];
    this.tools = new Map();
    this.dirty = new Set();
    this.frame = null;
    this.finished = false;
  }

  // files: the names of attached text files, shown as chips (their text went to the model)
  setUser(text, images = [], messageId = null, files = []) {
    const body = h("div", { class: "bubble" });
    if (images.length) {
      body.append(
        h("div", { class: "msg-images" }, images.map((src) =>
          h("img", { src, alt: "attached image", class: "msg-image", onclick: () => openLightbox(src) }),
        )),
      );
    }
    if (files.length) {
      body.append(
        h("div", { class: "msg-files" }, files.map((name) =>
          h("span", { class: "file-chip", title: name }, icon("clip"), h("span", { class: "chip-name" }, name)),
        )),
      );
    }
    if (text) body.append(h("div", { class: "user-text" }, text));
    this.messageId = messageId; // null for a turn sent from this page: feedback.js finds it
    this.userText = text;
    const el = h("div", { class: "msg user", dataset: messageId ? { messageId } : {} }, body);
    if (this.user) this.user.replaceWith(el);
    else this.el.prepend(el);
    this.user = el;
  }

  ensureAnswer() {
    if (!this.answer) {
      this.answer = h("div", { class: "msg assistant" }, h("div", { class: "segments" }));
      this.el.append(this.answer);
    }
    return this.answer.firstChild;
  }

  setWaiting(waiting) {
    this.ensureAnswer();
    this.answer.classList.toggle("waiting", waiting);
  }

  lastSegment(kind) {
    const last = this.segments[this.segments.length - 1];
    return last && last.kind === kind ? last : null;
  }

  addSegment(kind, el) {
    const segment = { kind, el, text: "" };
    this.segments.push(segment);
    this.ensureAnswer().append(el);
    return segment;
  }

  addReasoning(text, open = true) {
    let segment = this.lastSegment("reasoning");
    if (!segment) {
      const el = h("details", { class: "reasoning", open }, h("summary", {}, icon("brain"), "Reasoning"), h("div", { class: "reasoning-text" }));
      segment = this.addSegment("reasoning", el);
    }
    segment.text += text;
    segment.el.lastChild.textContent = segment.text;
  }

  addText(text) {
    let segment = this.lastSegment("text");
    if (!segment) {
      // the answer has begun: fold the thinking away
      const thinking = this.lastSegment("reasoning");
      if (thinking && !this.finished) thinking.el.open = false;
      segment = this.addSegment("text", h("div", { class: "markdown" }));
    }
    segment.text += text;
    this.schedule(segment);
  }

  schedule(segment) {
    this.dirty.add(segment);
    if (this.frame) return;
    const flush = () => {
      this.frame = null;
      this.flush();
    };
    // this.frame holds the cancel function. A hidden page gets no animation frames: a timer
    // keeps background views current.
    if (document.hidden) {
      const timer = setTimeout(flush, 100);
      this.frame = () => clearTimeout(timer);
    } else {
      const id = requestAnimationFrame(flush);
      this.frame = () => cancelAnimationFrame(id);
    }
  }

  flush() {
    if (this.frame) {
      this.frame();
      this.frame = null;
    }
    for (const item of this.dirty) renderMarkdown(item.el, item.text);
    this.dirty.clear();
  }

  toolStart({ call_id: callId, name, arguments: args }) {
    const status = h("span", { class: "tool-status", title: "running" });
    const time = h("span", { class: "tool-time" });
    const body = h(
      "div",
      { class: "tool-body" },
      h("div", { class: "label" }, "Arguments"),
      h("pre", { class: "tool-args" }, prettyArguments(args)),
    );
    const el = h(
      "details",
      { class: "tool running" },
      h("summary", {}, status, h("span", { class: "tool-name" }, name), h("span", { class: "tool-short" }, shortArguments(args)), time),
      body,
    );
    this.addSegment("tool", el);
    this.tools.set(callId, { el, status, time, body });
  }

  toolResult({ call_id: callId, name, ok, preview, error, duration, truncated }) {
    let card = this.tools.get(callId);
    if (!card) {
      this.toolStart({ call_id: callId, name, arguments: "" });
      card = this.tools.get(callId);
    }
    card.el.classList.remove("running");
    card.el.classList.add(ok === false ? "failed" : ok === true ? "ok" : "stored");
    card.status.title = ok === false ? "failed" : "done";
    if (typeof duration === "number") card.time.textContent = `${duration.toFixed(duration < 10 ? 2 : 1)} s`;
    const label = ok === false ? "Error" : truncated ? "Result (truncated)" : "Result";
    card.body.append(h("div", { class: "label" }, label), h("pre", { class: ok === false ? "tool-result error" : "tool-result" }, clip(ok === false ? error || preview : preview)));
    if (card.kids) card.kids.settle(ok);
    else if (SUBAGENT_TOOLS.has(name)) card.kids = Children.fromResult(card.el, ok === false ? error : preview);
  }

  // An event of a subagent that the call `call_id` runs.
  child(data) {
    let card = this.tools.get(data.call_id);
    if (!card) {
      this.toolStart({ call_id: data.call_id, name: "toolkit_subagent", arguments: "" });
      card = this.tools.get(data.call_id);
    }
    if (!card.kids) card.kids = new Children(card.el);
    card.kids.child(data);
  }

  notice({ message, kind, title }) {
    const text = kind === "notify" && title ? `${title}: ${message}` : message;
    this.addSegment("notice", h("div", { class: `notice ${kind || "info"}` }, text));
  }

  question(data) {
    if (this.questions.has(data.id)) return;
    const answer = this.answerQuestion || (() => Promise.reject(new Error("this view cannot answer")));
    const card = new QuestionCard(data, answer);
    this.questions.set(data.id, card);
    this.addSegment("question", card.el);
  }

  questionClosed({ id, status, answer }) {
    const card = this.questions.get(id);
    if (card) card.close(status, answer);
  }

  error({ message, kind }) {
    const text = kind === "cancelled" ? `Stopped: ${message}` : message;
    this.addSegment("error", h("div", { class: kind === "cancelled" ? "notice cancelled" : "notice error", role: "alert" }, text));
    this.finish();
  }

  done({ text }) {
    let last = this.segments.filter((s) => s.kind === "text" || s.kind === "tool").pop();
    // the streamed text can differ from the final one (e.g. tool-call markup stripped)
    if (text && (!last || last.kind !== "text")) last = this.addSegment("text", h("div", { class: "markdown" }));
    if (text && last.text.trim() !== text.trim()) {
      last.text = text;
      this.schedule(last);
    }
    this.finish();
  }

  finish() {
    this.finished = true;
    this.el.classList.add("finished");
    if (this.answer) this.answer.classList.remove("waiting");
    for (const card of this.tools.values()) {
      if (card.el.classList.contains("running")) {
        card.el.classList.replace("running", "stored");
      }
      if (card.kids) card.kids.settle(null);
    }
    for (const card of this.questions.values()) card.close("ended");
  }

  // Apply one UI event of this turn.
  apply(event) {
    const data = event.data;
    switch (event.event) {
      case "start":
        this.setWaiting(true);
        break;
      case "reasoning":
        this.addReasoning(data.text);
        break;
      case "token":
        this.addText(data.text);
        break;
      case "tool_start":
        this.toolStart(data);
        break;
      case "tool_result":
        this.toolResult(data);
        break;
      case "child":
        this.child(data);
        break;
      case "notice":
        this.notice(data);
        break;
      case "question":
        this.question(data);
        break;
      case "question_closed":
        this.questionClosed(data);
        break;
      case "error":
        this.error(data);
        break;
      case "done":
        this.done(data);
        break;
      default:
        break;
    }
  }
}
