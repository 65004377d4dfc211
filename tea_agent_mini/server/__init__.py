"""The web server: a Starlette app over the same runtime the CLI uses.

``create_app(runtime)`` and ``serve(config)`` live in :mod:`tea_agent_mini.server.app`; nothing is
imported here so that ``import tea_agent_mini`` never pulls in Starlette or uvicorn.

Layout: ``app`` (factory, lifespan, uvicorn), ``security`` (host, auth, origin, body limits),
``turns`` (background turns, event logs, queues), ``ui_events`` / ``openai_format`` / ``sse``
(the encoders over ``Session.run_turn`` events), ``spec`` / ``openapi`` (the API document),
``routes/`` (one module per resource; memory, tasks and export plug in the same way).
"""
