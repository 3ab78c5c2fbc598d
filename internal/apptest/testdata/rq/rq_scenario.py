"""python-rq against a Redis-protocol server at 127.0.0.1:$PORT, as an application uses it.

200 jobs run by a real `rq worker --with-scheduler` process, a failing job that lands in the
failed registry, and a job scheduled for later that runs. Prints one JSON line; exits non-zero
on failure or after a deadline."""
import json
import os
import subprocess
import sys
import time
from datetime import timedelta

from redis import Redis
from rq import Queue
from rq.registry import FailedJobRegistry, FinishedJobRegistry

import rqtasks

port = int(os.environ["PORT"])
deadline = time.monotonic() + float(os.environ.get("DEADLINE_S", "240"))
conn = Redis(host="127.0.0.1", port=port)
q = Queue("default", connection=conn)

jobs = [q.enqueue(rqtasks.double, n) for n in range(200)]
bad = q.enqueue(rqtasks.explode)
later = q.enqueue_in(timedelta(seconds=2), rqtasks.double, 21)

here = os.path.dirname(os.path.abspath(__file__))
worker = subprocess.Popen(
    [sys.executable, "-m", "rq.cli", "worker", "--with-scheduler", "--url", f"redis://127.0.0.1:{port}", "default"],
    cwd=here, env=dict(os.environ, PYTHONPATH=here), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def finished():
    for j in jobs + [later]:
        j.refresh()
    bad.refresh()
    return all(j.get_status() == "finished" for j in jobs + [later]) and bad.get_status() == "failed"


try:
    while not finished():
        if worker.poll() is not None:
            raise SystemExit("worker exited early:\n" + worker.stdout.read().decode(errors="replace"))
        if time.monotonic() > deadline:
            states = {}
            for j in jobs + [bad, later]:
                states[j.get_status()] = states.get(j.get_status(), 0) + 1
            raise SystemExit(f"deadline passed: {states}")
        time.sleep(0.1)
    wrong = [j.id for n, j in enumerate(jobs) if j.result != n * 2]
    if wrong or later.result != 42:
        raise SystemExit(f"wrong results: {wrong[:5]} later={later.result}")
    failed = FailedJobRegistry(queue=q)
    if bad.id not in failed.get_job_ids():
        raise SystemExit("the failing job is not in the failed registry")
    if "ValueError" not in (bad.exc_info or ""):
        raise SystemExit("the failed job has no exception info")
    print(json.dumps({
        "finished": len(FinishedJobRegistry(queue=q).get_job_ids()),
        "failed": failed.get_job_ids(),
        "scheduled_result": later.result,
    }))
finally:
    worker.terminate()
    try:
        out, _ = worker.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        worker.kill()
