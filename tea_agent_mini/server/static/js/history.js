// Stored messages (GET /v1/sessions/{id}/messages) -> turn views: a user message opens a turn; the
// assistant messages, tool calls and tool results after it fill that turn's answer. A turn that was
// stopped or failed ends with an assistant message whose status says so (with the error and the
// part of the answer that had arrived); tool messages carry their status and duration.
import { TurnView } from "./turnview.js";

const ATTACHED_FILE = /^\[attached file ([^\]\n]+)\]\n/;

// {text, images, files} of a user message's content (text or OpenAI content parts).
export function userParts(content) {
  if (typeof content === "string" || content === null || content === undefined) {
    return { text: content || "", images: [], files: [] };
  }
  const texts = [];
  const images = [];
  const files = [];
  for (const part of content) {
    if (part.type === "image_url" && part.image_url && part.image_url.url) images.push(part.image_url.url);
    else if (part.type === "text") {
      const match = ATTACHED_FILE.exec(part.text || "");
      if (match) files.push(match[1]);
      else texts.push(part.text || "");
    }
  }
  return { text: texts.join(""), images, files };
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((p) => p.type === "text").map((p) => p.text || "").join("");
}

export function buildTurns(messages) {
  const views = [];
  let view = null;
  const answerView = () => {
    if (!view) {
      view = new TurnView("");
      views.push(view);
    }
    return view;
  };
  for (const message of messages) {
    if (message.role === "user") {
      view = new TurnView(`m${message.id}`);
      views.push(view);
      const parts = userParts(message.content);
      view.setUser(parts.text, parts.images, message.id, parts.files);
    } else if (message.role === "assistant") {
      const current = answerView();
      if (message.reasoning) current.addReasoning(message.reasoning, false);
      const text = textOf(message.content);
      if (text) current.addText(text);
      for (const call of message.tool_calls || []) {
        current.toolStart({ call_id: call.id, name: call.name, arguments: call.arguments });
      }
      if (message.status === "stopped" || message.status === "failed") {
        current.error({ message: message.error || message.status, kind: message.status === "stopped" ? "cancelled" : "error" });
      }
    } else if (message.role === "tool") {
      const ok = message.status === "ok" ? true : message.status ? false : null;
      answerView().toolResult({
        call_id: message.tool_call_id,
        name: message.name || "tool",
        ok,
        preview: textOf(message.content),
        error: message.error,
        duration: message.duration,
      });
    }
  }
  for (const item of views) {
    item.flush();
    item.finish();
  }
  return views;
}

// Where the running turn begins among the stored messages: its user message is the last one
// stored (queued messages are stored only when they run). -1 when it is not stored yet.
export function runningTurnStart(messages, running) {
  if (!running) return -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role !== "user") continue;
    const text = userParts(messages[i].content).text;
    const expected = running.text || "";
    return text.startsWith(expected) || expected.startsWith(text.slice(0, 500)) ? i : -1;
  }
  return -1;
}
