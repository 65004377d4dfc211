"""The Mermaid text of a small flow and a small workflow, exactly."""

from __future__ import annotations

from tea_agent_mini.flows import Flow, Workflow, and_, listen, or_, router, start


class Review(Flow):
    @start("redo")
    def write(self):
        pass

    @start()
    def gather(self):
        pass

    @router(write)
    def judge(self):
        if self.state.get("good"):
            return "ok"
        return "redo"

    @listen("ok")
    def publish(self):
        pass

    @listen(and_(publish, gather))
    def end(self):  # a Mermaid keyword as a step name
        pass

    @listen(or_(publish, "redo"))
    def log(self):
        pass


def test_a_flow_as_mermaid():
    assert Review.mermaid() == (
        "flowchart TD\n"
        '    write(["write"])\n'
        '    gather(["gather"])\n'
        '    judge{"judge"}\n'
        '    publish["publish"]\n'
        '    n_end["end"]\n'
        '    log["log"]\n'
        "    judge -->|redo| write\n"
        "    write --> judge\n"
        "    judge -->|ok| publish\n"
        '    end_and(("and"))\n'
        "    end_and --> n_end\n"
        "    publish --> end_and\n"
        "    gather --> end_and\n"
        "    publish --> log\n"
        "    judge -->|redo| log\n"
    )


class Guessing(Flow):
    @start()
    def begin(self):
        pass

    @router(begin)
    def pick(self):
        return self.state["label"]

    @listen("left")
    def go_left(self):
        pass


def test_labels_a_router_does_not_spell_out_are_dotted():
    assert Guessing.mermaid().splitlines()[-1] == "    pick -.->|left| go_left"


def test_a_workflow_as_mermaid():
    wf = Workflow("ship")
    wf.task("build", lambda ctx: None)
    wf.condition("green", lambda ctx: "yes", {"yes": "release", "no": "retry"})
    wf.loop("retry", "build again", until=lambda ctx: True, max_times=2)
    wf.task("build again", lambda ctx: None)
    wf.parallel("release", ["tag", "notes"])
    wf.task("tag", lambda ctx: None)
    wf.task("notes", lambda ctx: None)
    wf.wait("cool", 0.1)
    wf.end("end")
    wf.edge("build", "green")
    wf.edge("retry", "release")
    wf.edge("release", "cool")
    wf.edge("cool", "end")
    assert wf.mermaid() == (
        "flowchart TD\n"
        '    build["build"]\n'
        '    green{"green"}\n'
        '    retry{{"retry"}}\n'
        '    build_again["build again"]\n'
        '    release[["release"]]\n'
        '    tag["tag"]\n'
        '    notes["notes"]\n'
        '    cool[/"cool"/]\n'
        '    n_end(["end"])\n'
        "    build --> green\n"
        "    green -->|yes| release\n"
        "    green -->|no| retry\n"
        "    retry -.->|repeat| build_again\n"
        "    retry --> release\n"
        "    release -.-> tag\n"
        "    release -.-> notes\n"
        "    release --> cool\n"
        "    cool --> n_end\n"
    )
