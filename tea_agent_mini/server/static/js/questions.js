// A question a tool asks mid-turn (toolkit_question): a card inside the turn with the choices as
// buttons, a text field, and the time left. The tool waits on the server; the answer goes to
// POST /v1/sessions/{id}/questions/{qid}. The card closes on the `question_closed` event (also
// replayed after a reload), or when the turn ends.

import { h, toast } from "./dom.js";

function clock(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  return s >= 60 ? `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}` : `${s} s`;
}

export class QuestionCard {
  // data: the `question` event; answer(id, text) -> Promise posting the answer.
  constructor(data, answer) {
    this.id = data.id;
    this.answer = answer;
    this.closed = false;
    this.ends = Date.now() + (data.expires_in ?? data.timeout ?? 0) * 1000;
    this.timeLeft = h("span", { class: "question-time" });
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
    const choices = (data.choices || []).map((choice) =>
      h("button", { type: "button", class: "btn question-choice", onclick: () => this.send(choice) }, choice),
    );
    const sendButton = h("button", { type: "button", class: "btn primary small", onclick: () => this.send(this.input.value) }, "Answer");
    this.status = h("div", { class: "question-status" });
    this.form = h(
      "div",
      { class: "question-form" },
      choices.length ? h("div", { class: "question-choices" }, choices) : null,
      h("div", { class: "row" }, this.input, sendButton),
    );
    const meta = [this.timeLeft, data.default ? ` · default: ${data.default}` : ""];
    this.el = h(
      "div",
      { class: "question open", role: "group", "aria-label": "Question", dataset: { question: data.id } },
      h("div", { class: "question-text" }, data.question),
      this.form,
      h("div", { class: "question-meta" }, meta),
      this.status,
    );
    this.tick();
    this.timer = setInterval(() => this.tick(), 1000);
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
    this.el.classList.replace("open", status === "answered" ? "answered" : "expired");
    const text = {
      answered: `Answered: ${answer}`,
      timeout: "Nobody answered in time; the default was used.",
      gone: "This question was already answered or has timed out.",
      ended: "The turn ended before an answer.",
    }[status];
    this.status.textContent = text || "";
  }
}
