"""The bundled tool modules: the ones ``Toolkit.load()`` imports and the small wheel ships.

``build_mini.py`` reads this: modules in SHIPPED go into the wheel (after checking that every tool's
``requires`` lies inside the runtime dependency set), modules in EXCLUDED are left out. Keys are
dotted module names relative to ``tea_agent_mini.tools`` (``"files.edit"`` is
``tea_agent_mini/tools/files/edit.py``); an EXCLUDED key may name a whole subpackage. The
framework names no tool family anywhere else.
"""

from __future__ import annotations

SHIPPED: dict[str, str] = {
    "finder": "toolkit_find_tools: finds installed tools by need and adds them to the conversation",
    "files.files": "toolkit_file: read, write, append and list files in the workspace",
    "files.edit": "toolkit_edit (exact string replacement) and toolkit_apply_patch (unified diffs)",
    "shell": "toolkit_exec: shell commands with an activity-aware timeout, a deny-list, a sandbox",
    "files.search": "toolkit_glob and toolkit_grep: pure-Python file search honouring .gitignore",
    "web.fetch": "toolkit_web_fetch: fetch a URL and turn HTML into readable text (httpx)",
    "system": "toolkit_gettime and toolkit_os_info",
    "todo": "toolkit_todo: a per-topic task checklist kept in the store",
    "files.savefile": "toolkit_save_file: text/base64 writes, chunked, committed atomically",
    "files.diffs": "toolkit_diff_edit and toolkit_diff: unified diffs generated, applied, undone",
    "files.batch": "toolkit_batch_process: count, replace (dry run by default) or stats, a glob",
    "dev.formatting": "toolkit_format_code: ruff/black/clang-format/prettier when installed",
    "dev.codereview": "toolkit_code_review: compile + AST checks, plus ruff when installed",
    "dev.testrun": "toolkit_run_tests: pytest with parsed counts and failing test ids",
    "git.git": "toolkit_git (status/diff/log/branch/show) and toolkit_git_commit",
    "dev.project": "toolkit_build (python/make/npm) and toolkit_read_pyproject",
    "dev.release": "toolkit_release_version: bump the version and add a CHANGELOG.md entry",
    "dates.lunar": "toolkit_lunar: Gregorian <-> Chinese lunar calendar 1900-2100, pure Python",
    "dates.dates": "toolkit_date_diff and toolkit_date_add: differences, business days, arithmetic",
    "weather": "toolkit_weather_my: current weather and forecast from Open-Meteo (httpx)",
    "web.search": "toolkit_search: web search via DuckDuckGo's HTML endpoint (httpx + html.parser)",
    "notify": "toolkit_notify: desktop notification (notify-send/osascript) or a saved UI notice",
    "mail": "toolkit_send_email: plain-text email over SMTP, settings from <home>/email.yaml",
    "plan": "toolkit_plan and toolkit_task_resume: a per-topic plan kept in the store, resumable",
    "commands": "toolkit_custom_commands: Markdown prompt templates / slash commands",
    "knowledge": "toolkit_kb: a Markdown knowledge base under <home>/kb with keyword search",
    "history": "toolkit_query_chat_history and toolkit_dump_topic: earlier conversations",
    "topics": "toolkit_set_topic_title, toolkit_topic_prompt, toolkit_fork_session",
    "publish": "toolkit_publish_doc: Markdown or standalone HTML documents in <workspace>/docs",
    "question": "toolkit_question: ask the user through the front end, with a timeout and default",
    "vision": "toolkit_vision_analyze: send an image to the configured vision-capable model",
    "settings": "toolkit_config, toolkit_get_config_path, toolkit_get_models, "
    "toolkit_list_provider_models, toolkit_toggle_reasoning",
    "modes": "toolkit_mode: design/develop/test/review/docs/devops working modes per topic",
    "introspect": "toolkit_harness_schema and toolkit_self_report: capabilities and health",
    "memory": "toolkit_memory: long-term memory (add, list, search, forget, pin, stats)",
    "mcp": "toolkit_mcp: MCP servers' state and tools (the servers' tools join as mcp_*)",
    "export": "toolkit_export_last_pdf: the current conversation as a PDF in the workspace",
    "scheduler": "toolkit_scheduler: scheduled shell/prompt tasks (add, run_now, history ...)",
    "skills": "toolkit_skills: list, load, search and create SKILL.md skills",
    "selfmade": "toolkit_save, toolkit_reload, toolkit_rollback, toolkit_list_versions: "
    "self-made tools in ~/.tea_agent/tools, hot-loaded and versioned",
    "evolve.selfevolve": "toolkit_self_evolve: a change to a workspace file or a user tool, "
    "checked layer by layer (git, backup, syntax, compile, ruff, signatures, tests), rolled back",
    "evolve.evolution": "toolkit_evolution: tool usage statistics and suggestions, run or shown",
    "subagents": "toolkit_subagent, toolkit_parallel_subtasks, toolkit_subagent_msg: child "
    "agents with identities (agent/bundled/*.md, ~/.tea_agent/agents), run concurrently",
    "team": "toolkit_spawn_teammate, toolkit_list_teammates, toolkit_send_message, "
    "toolkit_read_inbox, toolkit_broadcast: teammates that stay, each with a worker and inbox",
    "evaluation": "toolkit_evaluation: how past tasks went (outcomes, quality, the user's "
    "feedback) and the lessons failed ones left",
    "prompts": "toolkit_prompt_evolve: versions of the agent's guidelines (list, evolve from "
    "evaluations and lessons, accept, rollback, set, diff)",
}

# Tool families of the full tea_agent that the mini build does not carry, and why.
EXCLUDED: dict[str, str] = {
    "browser": "needs playwright and a browser build",
    "ocr": "needs PIL and an OCR engine",
    "clipboard": "needs a desktop session (tkinter)",
}
