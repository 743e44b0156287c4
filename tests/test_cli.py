"""The command line as a creator and a script meet it: pipes, typos, stdin, one task, replies, export."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import LomoEnv, wait_for

ROOMY = {"LOMO_TIME_SCALE": "0.1"}  # studio deadlines scale with this: room for a loaded machine


def _closed_pipe(lomo: LomoEnv, *args: str, model: str = "lomo/replay") -> subprocess.CompletedProcess[str]:
    """Run lomo with a stdout whose reader has already gone away (`lomo … | head -0`)."""
    proc = subprocess.Popen(lomo.argv(*args, model=model), env=lomo.environ(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read()
    proc.wait(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", stderr)


@pytest.mark.slow
@pytest.mark.parametrize("args", [("inspect",), ("inspect", "--json"), ("gates",), ("task", "list"),
                                  ("task", "show", "main"), ("--run-once", "what is 12*7?"), ("--help",),
                                  ("stats",), ("context",), ("memory", "list"), ("task", "export", "main")])
def test_a_reader_that_goes_away_ends_every_command_quietly(lomo: LomoEnv, args: tuple[str, ...]) -> None:
    lomo.new_task("Spring campaign")
    done = _closed_pipe(lomo, *args, model="lomo/local")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr


def test_a_mistyped_option_is_named_with_the_nearest_one(lomo: LomoEnv) -> None:
    done = subprocess.run(["python", "-m", "lomo_tui", "--modle", "openai/gpt-4o", "inspect"], env=lomo.environ(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "unknown option --modle; did you mean --model?" in done.stderr
    assert "invalid choice" not in done.stderr


def test_an_abbreviated_option_is_not_guessed(lomo: LomoEnv) -> None:
    done = lomo.run("send", "hello", "--ta", "main")
    assert done.returncode == 2 and "--ta" in done.stderr and "--task" in done.stderr
    assert lomo.inspect()["inbox"] == []


def test_a_mistyped_command_suggests_the_nearest_one(lomo: LomoEnv) -> None:
    done = lomo.run("inpsect")
    assert done.returncode == 2 and "unknown command 'inpsect'; did you mean 'inspect'?" in done.stderr


def test_task_list_includes_one_shot_tasks_marked(lomo: LomoEnv) -> None:
    assert lomo.run("--run-once", "a picture of a cat", model="lomo/local").returncode == 0
    listed = lomo.run("task", "list", model="lomo/local")
    one_shot = [line for line in listed.stdout.splitlines() if "(one-shot)" in line]
    assert len(one_shot) == 1 and "cat" in one_shot[0]  # titled with what was asked for ("Picture of a cat")
    kinds = {t["kind"] for t in json.loads(lomo.run("task", "list", "--json").stdout)}
    assert kinds == {"main", "lightweight"}


@pytest.mark.slow
def test_task_show_gives_brief_checklist_with_evidence_replies_artifacts_gates_jobs_and_spend(lomo: LomoEnv) -> None:
    first = lomo.run("--run-once", "a retro poster series for a jazz night, three posters", "--json",
                     model="lomo/local", **ROOMY)
    assert first.returncode == 0, first.stderr
    task = next(t for t in json.loads(first.stdout)["tasks"] if t["kind"] == "persistent")
    shown = lomo.run("task", "show", task["id"], "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert {"id", "kind", "status", "title", "brief", "checklist", "replies", "artifacts", "gates", "jobs",
            "spend"} <= set(doc)
    assert doc["id"] == task["id"] and doc["kind"] == "persistent" and "jazz" in doc["brief"]
    made = [item for item in doc["checklist"] if item["status"] == "done"]
    assert made and all(item["evidence"] for item in made)
    assert set(made[0]) >= {"title", "status", "evidence"}
    assert doc["replies"] and doc["replies"] == task["replies"]
    assert sorted(doc["artifacts"]) == sorted(a["path"] for a in task["artifacts"])
    assert all((lomo.workspace / path).is_file() for path in doc["artifacts"])
    assert [g["status"] for g in doc["gates"]] == ["pending"] and doc["gates"][0]["kind"] == "question"
    assert len(doc["jobs"]) == 3 and {j["status"] for j in doc["jobs"]} == {"done"}
    charged = sum(c["amount"] for c in lomo.inspect()["charges"] if c["status"] == "charged")
    assert doc["spend"]["amount"] == pytest.approx(charged) and charged > 0
    text = lomo.run("task", "show", task["id"]).stdout
    assert "Checklist:" in text and "✓ Poster 1 of 3 — made renders/image/" in text
    assert f"lomo approve {doc['gates'][0]['id']}" in text


def test_task_show_of_an_unknown_id_exits_1_with_one_line(lomo: LomoEnv) -> None:
    done = lomo.run("task", "show", "task-nope")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == ["lomo: no task with id 'task-nope'; `lomo task list` lists the tasks"]


def test_send_takes_the_message_from_stdin(lomo: LomoEnv) -> None:
    long_brief = "\n".join(f"line {n}: three posters, warm colours" for n in range(400))
    dash = subprocess.run(lomo.argv("send", "-"), env=lomo.environ(), input=long_brief + "\n",
                          capture_output=True, text=True, timeout=60)
    assert dash.returncode == 0, dash.stderr
    piped = subprocess.run(lomo.argv("send", "--task", "main"), env=lomo.environ(), input="a picture of a cat",
                           capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0, piped.stderr
    texts = [m["text"] for m in lomo.inspect()["inbox"]]
    assert texts == [long_brief, "a picture of a cat"]


def test_run_once_takes_the_message_from_stdin(lomo: LomoEnv) -> None:
    lomo.replay({"content": "Seven times twelve is 84.", "tool_calls": []})
    done = subprocess.run(lomo.argv("--run-once", "-", "--json"), env=lomo.environ(), input="what is 12*7?\n",
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    assert [m["text"] for m in lomo.inspect()["inbox"]][0] == "what is 12*7?"


@pytest.mark.slow
@pytest.mark.parametrize("message", ["", "   ", "\n"])
def test_an_empty_message_is_refused_and_nothing_is_delivered(lomo: LomoEnv, message: str) -> None:
    done = lomo.run("send", message)
    assert done.returncode == 2 and done.stderr.strip() == "lomo: the message is empty; say what you would like"
    piped = subprocess.run(lomo.argv("send", "-"), env=lomo.environ(), input=message, capture_output=True,
                           text=True, timeout=60)
    assert piped.returncode == 2
    assert lomo.inspect()["inbox"] == []


@pytest.mark.slow
def test_send_wait_prints_the_reply_a_running_worker_gives(lomo: LomoEnv, kill_on_exit) -> None:  # noqa: ANN001
    lomo.replay({"content": "Seven times twelve is 84.", "tool_calls": []})
    worker = lomo.popen("worker")
    kill_on_exit(worker)
    assert worker.stderr is not None
    wait_for(lambda: "lomo worker" in worker.stderr.readline(), timeout=60, what="the worker to start")
    done = lomo.run("send", "what is 12*7, in words please?", "--wait", "60")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Seven times twelve is 84."
    as_json = lomo.run("send", "and 6*7?", "--wait", "60", "--json")
    reply = json.loads(as_json.stdout)
    assert reply["settled"] and reply["replies"] == ["done"]  # the replay file is exhausted: "done"


def test_send_wait_without_anyone_to_answer_says_so(lomo: LomoEnv) -> None:
    done = lomo.run("send", "what is 12*7?", "--wait", "0.5")
    assert done.returncode == 1
    assert "no reply within 0.5 s; is the TUI or `lomo worker` running?" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_task_export_writes_markdown_and_html_with_the_results(lomo: LomoEnv, tmp_path: Path) -> None:
    first = lomo.run("--run-once", "a retro poster series for a jazz night, three posters", "--json",
                     model="lomo/local", **ROOMY)
    task = next(t for t in json.loads(first.stdout)["tasks"] if t["kind"] == "persistent")
    out = tmp_path / "share"
    md = lomo.run("task", "export", task["id"], "--format", "md", "-o", str(out / "poster.md"))
    assert md.returncode == 0, md.stderr
    text = (out / "poster.md").read_text(encoding="utf-8")
    assert text.startswith(f"# {task['title']}") and "## Brief" in text and "## Checklist" in text
    assert "**You:**" in text and "a retro poster series for a jazz night, three posters" in text
    images = [line[line.index("](") + 2:-1] for line in text.splitlines() if line.startswith("![")]
    assert len(images) == 3 and all((out / link).resolve().is_file() for link in images)
    page = lomo.run("task", "export", task["id"], "--format", "html", "-o", str(out / "poster.html"))
    assert page.returncode == 0, page.stderr
    html = (out / "poster.html").read_text(encoding="utf-8")
    assert html.count('src="data:image/png;base64,') == 3 and "<h2>Conversation</h2>" in html
    unknown = lomo.run("task", "export", "task-nope")
    assert unknown.returncode == 1 and "no task with id" in unknown.stderr


def test_an_unexpected_failure_is_one_line_not_a_traceback(lomo: LomoEnv) -> None:
    done = lomo.run("--run-once", "hello", LOMO_REPLAY_FILE="")
    assert done.returncode == 1
    needs = "lomo: --model lomo/replay needs LOMO_REPLAY_FILE=path/to/responses.jsonl"
    assert done.stderr.strip().splitlines() == [needs]


@pytest.mark.slow
def test_task_export_of_a_chinese_task_is_in_chinese(lomo: LomoEnv, tmp_path: Path) -> None:
    first = lomo.run("--run-once", "画一张猫的图片", "--json", model="lomo/local", **ROOMY)
    task = next(t for t in json.loads(first.stdout)["tasks"] if t["kind"] == "lightweight")
    md = lomo.run("task", "export", task["id"], "--format", "md", "-o", str(tmp_path / "cat.md"))
    assert md.returncode == 0, md.stderr
    text = (tmp_path / "cat.md").read_text(encoding="utf-8")
    assert "## 对话" in text and "**你:**" in text and "## 成果" in text and "轻量任务" in text
    assert "## Conversation" not in text and "**You:**" not in text
    page = lomo.run("task", "export", task["id"], "--format", "html")
    assert '<html lang="zh">' in page.stdout and "<h2>对话</h2>" in page.stdout
