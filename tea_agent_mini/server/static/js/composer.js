// The message box: Enter sends, Shift+Enter adds a line; attach (button, paste, drop); Send stays
// available while a turn runs (the message is queued) and Stop appears next to it.
import { toast } from "./dom.js";
import { Attachments, ACCEPT } from "./attach.js";

const MAX_HEIGHT = 220;

export class Composer {
  constructor(app, { form, input, send, stop, attach, fileInput, chips }) {
    this.app = app;
    this.form = form;
    this.input = input;
    this.sendButton = send;
    this.stopButton = stop;
    this.attachments = new Attachments(app.api, chips);
    fileInput.accept = ACCEPT;
    attach.addEventListener("click", () => fileInput.click());
    fileInput.addEventListener("change", () => {
      this.attachments.addFiles(fileInput.files);
      fileInput.value = "";
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    stop.addEventListener("click", () => this.app.stopActive());
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
        event.preventDefault();
        this.submit();
      }
    });
    input.addEventListener("input", () => this.autosize());
    input.addEventListener("paste", (event) => {
      const files = [...(event.clipboardData ? event.clipboardData.files : [])];
      if (files.length) {
        event.preventDefault();
        this.attachments.addFiles(files);
      }
    });
    form.addEventListener("dragover", (event) => {
      event.preventDefault();
      form.classList.add("dragging");
    });
    form.addEventListener("dragleave", () => form.classList.remove("dragging"));
    form.addEventListener("drop", (event) => {
      event.preventDefault();
      form.classList.remove("dragging");
      if (event.dataTransfer) this.attachments.addFiles(event.dataTransfer.files);
    });
  }

  autosize() {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, MAX_HEIGHT)}px`;
  }

  focus() {
    this.input.focus();
  }

  setRunning(running) {
    this.stopButton.hidden = !running;
    this.sendButton.title = running ? "Queue this message (runs after the current answer)" : "Send (Enter)";
    this.input.placeholder = running ? "Type to queue another message…" : "Message tea-agent-mini…";
  }

  async submit() {
    const text = this.input.value;
    if (!text.trim() && this.attachments.empty) return;
    this.sendButton.disabled = true;
    try {
      const chat = await this.app.ensureChat();
      await chat.ready; // its history first, or loading it would wipe the new turn
      const files = await this.attachments.ready();
      if (!text.trim() && !files.ids.length) return;
      this.input.value = "";
      this.autosize();
      try {
        await chat.send(text, files);
        this.attachments.reset();
      } catch (error) {
        if (!this.input.value) this.input.value = text; // give the text back
        this.autosize();
        if (error.status === 503) this.app.openSetup(true);
        toast(error.message, "error", 7000);
      }
    } catch (error) {
      toast(error.message, "error", 7000);
    } finally {
      this.sendButton.disabled = false;
      this.focus();
    }
  }
}
