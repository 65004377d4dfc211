// The subagents a tool call runs (toolkit_subagent, toolkit_parallel_subtasks), shown under its
// card: one sub-card per child session with its agent, its state, its tool calls as they happen,
// its streamed text and its tokens, and a link that opens its session. A live call builds them
// from `child` events; a stored one from what its result says of each child
// ("[explorer · topic 1a2b3c4d · 3 tool calls · 1,234 tokens · 12.3 s]"), its link holding the
// topic's first characters (the app finds the session among the parent's children).
import { h, formatTokens, shortArguments } from "./dom.js";

export const SUBAGENT_TOOLS = new Set(["toolkit_subagent", "toolkit_parallel_subtasks"]);
const SUMMARY = /\[([^\s·\]]+) · topic ([0-9a-f]{8}) · (\d+) tool calls · ([\d,]+) tokens · ([\d.]+) s\]( (the subagent )?failed)?/g;
const TEXT_CHARS = 3000; // the end of a long streamed text is shown

class Child {
  constructor(agent, link) {
    this.meta = h("span", { class: "sub-meta" });
    this.state = h("span", { class: "sub-state" });
    this.tools = h("ul", { class: "sub-tools" });
    this.text = h("div", { class: "sub-text" });
    this.calls = new Map();
    this.streamed = "";
    const open = h("a", { class: "sub-link", href: "#", title: "Open the subagent's session", dataset: link }, "open");
    this.el = h("div", { class: "sub", dataset: { agent } }, h("div", { class: "sub-head" }, h("span", { class: "tool-status" }), h("b", {}, agent), this.state, this.meta, open), this.tools, this.text);
    this.set("running");
  }

  set(state) {
    this.el.className = `sub ${state}`;
    this.state.textContent = state;
  }

  get running() {
    return this.el.classList.contains("running");
  }

  line(callId, name, args) {
    const line = h("li", { class: "sub-tool running" }, h("code", {}, name), ` ${shortArguments(args)}`);
    this.calls.set(callId, line);
    this.tools.append(line);
    return line;
  }

  showText(text) {
    this.streamed = text;
    this.text.textContent = text.length > TEXT_CHARS ? `…${text.slice(-TEXT_CHARS)}` : text;
    this.text.scrollTop = this.text.scrollHeight;
  }

  apply(event) {
    switch (event.type) {
      case "tool_start":
        this.line(event.call_id, event.name, event.arguments);
        break;
      case "tool_result": {
        const line = this.calls.get(event.call_id) || this.line(event.call_id, event.name, "");
        line.className = `sub-tool ${event.ok ? "ok" : "failed"}`;
        if (!event.ok) line.title = event.error || "failed";
        break;
      }
      case "token":
        this.showText(this.streamed + event.text);
        break;
      case "notice":
        this.tools.append(h("li", { class: "sub-note" }, event.message));
        break;
      case "error":
        this.tools.append(h("li", { class: "sub-note failed" }, event.message));
        this.set("failed");
        break;
      case "done": {
        const u = event.usage || {};
        if (event.text) this.showText(event.text);
        this.meta.textContent = `${formatTokens(u.total_tokens || (u.prompt_tokens || 0) + (u.completion_tokens || 0))} tokens`;
        this.set("done");
        break;
      }
      default:
        break;
    }
  }
}

export class Children {
  constructor(card) {
    this.el = h("div", { class: "subagents" });
    card.after(this.el);
    this.kids = new Map();
  }

  child({ agent, topic_id: topic, event }) {
    let kid = this.kids.get(topic);
    if (!kid) {
      kid = new Child(agent, { session: topic });
      this.kids.set(topic, kid);
      this.el.append(kid.el);
    }
    kid.apply(event);
  }

  // The call has ended: a child still running ended with it.
  settle(ok) {
    for (const kid of this.kids.values()) if (kid.running) kid.set(ok === false ? "failed" : "stopped");
  }

  // A stored call: its children as its result describes them (null when it names none).
  static fromResult(card, text) {
    const found = [...String(text || "").matchAll(SUMMARY)];
    if (!found.length) return null;
    const box = new Children(card);
    for (const [, agent, prefix, calls, tokens, seconds, failed] of found) {
      const kid = new Child(agent, { topicPrefix: prefix });
      kid.set(failed ? "failed" : "done");
      kid.meta.textContent = `${calls} tool calls · ${tokens} tokens · ${seconds} s`;
      box.el.append(kid.el);
    }
    return box;
  }
}
