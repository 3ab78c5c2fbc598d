// BullMQ against a Redis-protocol server at 127.0.0.1:$PORT, the way an application uses it:
// 500 jobs with delays and priorities done by a worker, a repeatable job, a rate-limited
// worker, a flow (a parent done after its children), and QueueEvents seeing completions.
// Prints one JSON line of what happened; exits non-zero on any failure or after a deadline.
'use strict';
const { Queue, Worker, QueueEvents, FlowProducer } = require('bullmq');

const connection = { host: '127.0.0.1', port: Number(process.env.PORT), maxRetriesPerRequest: null };
const deadline = setTimeout(() => fail(new Error('deadline passed')), Number(process.env.DEADLINE_MS || 240000));
const closers = [];

function fail(err) {
  console.error('FAIL', err && err.stack || err);
  process.exit(1);
}

function waitFor(what, pred, everyMs = 50) {
  return new Promise((resolve, reject) => {
    const t = setInterval(async () => {
      try {
        if (await pred()) { clearInterval(t); resolve(); }
      } catch (e) { clearInterval(t); reject(new Error(what + ': ' + e.message)); }
    }, everyMs);
  });
}

async function jobsWithDelaysAndPriorities(result) {
  const q = new Queue('jobs', { connection });
  const events = new QueueEvents('jobs', { connection });
  closers.push(q, events);
  await events.waitUntilReady();
  let seenCompleted = 0;
  events.on('completed', () => { seenCompleted++; });
  const done = new Set();
  const w = new Worker('jobs', async job => {
    if (done.has(job.id)) throw new Error('job ' + job.id + ' run twice');
    done.add(job.id);
    return job.data.n * 2;
  }, { connection, concurrency: 8 });
  closers.push(w);
  w.on('failed', (job, err) => fail(new Error('job failed: ' + err.message)));
  const adds = [];
  for (let n = 0; n < 500; n++) {
    const opts = {};
    if (n % 5 === 0) opts.delay = 50 + (n % 7) * 30;
    if (n % 3 === 0) opts.priority = 1 + (n % 10);
    adds.push(q.add('double', { n }, opts));
  }
  const jobs = await Promise.all(adds);
  await waitFor('500 jobs completed', async () => (await q.getCompletedCount()) === 500);
  for (const j of [jobs[0], jobs[3], jobs[499]]) {
    const back = await q.getJob(j.id);
    if (back.returnvalue !== j.data.n * 2) throw new Error('job ' + j.id + ' returned ' + back.returnvalue);
  }
  await waitFor('QueueEvents saw the completions', async () => seenCompleted >= 500);
  result.completed = await q.getCompletedCount();
  result.ranOnce = done.size;
  result.eventsCompleted = seenCompleted;
  await w.close();
}

async function repeatable(result) {
  const q = new Queue('repeat', { connection });
  closers.push(q);
  let runs = 0;
  const w = new Worker('repeat', async () => { runs++; }, { connection });
  closers.push(w);
  await q.upsertJobScheduler('tick', { every: 200 }, { name: 'tick', data: {} });
  await waitFor('repeatable job ran 3 times', async () => runs >= 3);
  result.repeatRuns = runs >= 3;
  await q.removeJobScheduler('tick');
  await w.close();
}

async function rateLimited(result) {
  const q = new Queue('limited', { connection });
  closers.push(q);
  const starts = [];
  const w = new Worker('limited', async () => { starts.push(Date.now()); }, {
    connection, concurrency: 5, limiter: { max: 5, duration: 500 },
  });
  closers.push(w);
  await q.addBulk(Array.from({ length: 15 }, (_, i) => ({ name: 'l', data: { i } })));
  await waitFor('15 limited jobs done', async () => (await q.getCompletedCount()) === 15);
  // 15 jobs at 5 per 500 ms cannot all have started within the first window.
  result.limitedSpanMs = starts[starts.length - 1] - starts[0];
  if (result.limitedSpanMs < 500) throw new Error('rate limit not applied: 15 jobs in ' + result.limitedSpanMs + ' ms');
  await w.close();
}

async function flow(result) {
  const fp = new FlowProducer({ connection });
  closers.push(fp);
  const order = [];
  const wc = new Worker('children', async job => { order.push(job.name); return job.data.v; }, { connection });
  const wp = new Worker('parents', async job => {
    order.push(job.name);
    const vals = Object.values(await job.getChildrenValues());
    return vals.reduce((a, b) => a + b, 0);
  }, { connection });
  closers.push(wc, wp);
  const tree = await fp.add({
    name: 'parent', queueName: 'parents',
    children: [1, 2, 3].map(v => ({ name: 'child' + v, queueName: 'children', data: { v } })),
  });
  await waitFor('flow parent completed', async () => (await tree.job.getState()) === 'completed');
  const parent = await new Queue('parents', { connection }).getJob(tree.job.id);
  if (parent.returnvalue !== 6) throw new Error('parent returned ' + parent.returnvalue);
  if (order[order.length - 1] !== 'parent') throw new Error('parent ran before a child: ' + order);
  result.flowSum = parent.returnvalue;
  await wc.close();
  await wp.close();
}

(async () => {
  const result = {};
  await jobsWithDelaysAndPriorities(result);
  await repeatable(result);
  await rateLimited(result);
  await flow(result);
  await Promise.all(closers.map(c => c.close().catch(() => {})));
  clearTimeout(deadline);
  console.log(JSON.stringify(result));
  process.exit(0);
})().catch(fail);
