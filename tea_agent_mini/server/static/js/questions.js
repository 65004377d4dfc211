// A question a tool asks mid-turn (toolkit_question): a card inside the turn with the choices as
// buttons, a text field, and the time left. An approval (kind "approval": a tool that changes
// something, under `approval: ask`) shows the call and Allow / Deny only; no answer denies.
// The tool waits on the server; the answer goes to POST /v1/sessions/{id}/questions/{qid}. The card closes on the `question_closed` event (also
// replayed after a reload), or when the turn ends.

import { h, toast } from "./dom.js";

function clock(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  return s >= 60 ? `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}` : `${s} s`;
}

// The call an approval asks about: its arguments, pretty-printed when they are JSON.
function callText(data) {
  let args = data.arguments || "";
  try {
    args = JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    // shown as sent
  }
  return `${data.name || "tool"}(${args})`;
}

export class QuestionCard {
  // data: the `question` event; answer(id, text) -> Promise posting the answer.
  constructor(data, answer) {
    this.id = data.id;
    this.answer = answer;
    this.closed = false;
    this.approval = data.kind === "approval";
    this.ends = Date.now() + (data.expires_in ?? data.timeout ?? 0) * 1000;
    this.timeLeft = h("span", { class: "question-time" });
    this.status = h("div", { class: "question-status" });
    this.form = h("div", { class: "question-form" }, this.buttons(data), this.approval ? null : this.textRow(data));
    const fallback = this.approval ? " · denied if nobody answers" : data.default ? ` · default: ${data.default}` : "";
    this.el = h(
      "div",
      {
        class: this.approval ? "question approval open" : "question open",
        role: "group",
        "aria-label": this.approval ? "Approval" : "Question",
        dataset: { question: data.id },
      },
      h("div", { class: "question-text" }, data.question),
      this.approval ? h("pre", { class: "question-call" }, callText(data)) : null,
      this.form,
      h("div", { class: "question-meta" }, this.timeLeft, fallback),
      this.status,
    );
    this.tick();
    this.timer = setInterval(() => this.tick(), 1000);
  }

  buttons(data) {
    const choices = (data.choices || []).map((choice) => {
      const kind = this.approval ? (choice === "Allow" ? " primary" : " danger") : "";
      return h("button", { type: "button", class: `btn question-choice${kind}`, onclick: () => this.send(choice) }, choice);
    });
    return choices.length ? h("div", { class: "question-choices" }, choices) : null;
  }

  textRow(data) {
    this.input = h("input", {
      type: "text",
      class: "question-input",
      placeholder: data.choices && data.choices.length ? "Or type another answer…" : "Type your answer…",
      "aria-label": "Your answer",
      onkeydown: (event) => {
        if (event.key === "Enter") {
          event.preventDefault();
          this.send(this.input.value);
        }
      },
    });
    const sendButton = h("button", { type: "button", class: "btn primary small", onclick: () => this.send(this.input.value) }, "Answer");
    return h("div", { class: "row" }, this.input, sendButton);
  }

  tick() {
    const left = (this.ends - Date.now()) / 1000;
    this.timeLeft.textContent = left > 0 ? `${clock(left)} left to answer` : "waiting for the server…";
  }

  async send(text) {
    const value = String(text || "").trim();
    if (this.closed || !value) return;
    for (const el of this.form.querySelectorAll("button, input")) el.disabled = true;
    try {
      await this.answer(this.id, value);
      this.close("answered", value);
    } catch (error) {
      if (error.status === 409) this.close("gone");
      else {
        for (const el of this.form.querySelectorAll("button, input")) el.disabled = false;
        toast(`Could not send the answer: ${error.message}`, "error");
      }
    }
  }

  // status: answered | timeout | gone (already closed elsewhere) | ended (the turn is over)
  close(status, answer = null) {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.form.remove();
    this.timeLeft.parentElement.remove();
    const denied = this.approval && answer !== "Allow";
    this.el.classList.replace("open", status === "answered" && !denied ? "answered" : "expired");
    const text = {
      answered: this.approval ? (answer === "Allow" ? "Allowed" : "Denied") : `Answered: ${answer}`,
      timeout: this.approval ? "Nobody answered in time; the call was denied." : "Nobody answered in time; the default was used.",
      gone: "This question was already answered or has timed out.",
      ended: "The turn ended before an answer.",
    }[status];
    this.status.textContent = text || "";
  }
}
