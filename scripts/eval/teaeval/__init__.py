"""The evaluation harness: small agent tasks run through the CLI against a real model, judged
by their effects, with the model traffic recorded by a local proxy. See ../README.md."""
