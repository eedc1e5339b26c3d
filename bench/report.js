#!/usr/bin/env node
'use strict';
// Turns the latest bench/results/<scenario>-*.json into the markdown of BENCHMARKS.md's results section.
// `node bench/report.js` prints it; `node bench/report.js --write` replaces the section between the
// `<!-- results:start -->` and `<!-- results:end -->` markers of BENCHMARKS.md. Numbers are never typed by hand.
// `node bench/report.js --compare <before-dir> <after-dir> [--write]`: a before/after table of two result
// directories (BENCH_RESULTS_DIR runs), written between the `<!-- before-after:… -->` markers.
const { readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { RESULTS_DIR, ROOT, walTable, pairRatios } = require('./lib/util');
const { judge, targetRows, TARGETS } = require('./throughput');

const SCENARIOS = ['throughput', 'latency', 'fanout', 'isolation', 'api', 'memory'];

function latest(scenario, dir = RESULTS_DIR) {
  let files;
  try {
    files = readdirSync(dir).filter((f) => f.startsWith(`${scenario}-`) && f.endsWith('.json'));
  } catch {
    return null;
  }
  files.sort();
  for (let i = files.length - 1; i >= 0; i--) {
    const j = JSON.parse(readFileSync(join(dir, files[i]), 'utf8'));
    // results of another build (BENCH_SERVICE_MAIN) count only in the directory they were written to on purpose
    if (!j.error && (!j.serviceMain || dir !== RESULTS_DIR)) return { ...j, file: files[i] };
  }
  return null;
}

const cell = (v) => (v === null || v === undefined || v === '' ? '—' : String(v).replace(/\|/g, '\\|'));
function table(rows) {
  if (!rows?.length) return '';
  const cols = Object.keys(rows[0]);
  return [
    `| ${cols.map(cell).join(' | ')} |`,
    `|${cols.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${cols.map((c) => cell(r[c])).join(' | ')} |`),
  ].join('\n');
}
const r2 = (v) => (typeof v === 'number' ? Number(v.toFixed(2)) : v);
const verdict = (met) => (met ? '**met**' : '**missed**');

/**
 * The throughput targets' ratios and verdicts, worked out again from the stored sums with the scenario's own judge
 * (so every file is judged alike, on the unrounded ratios); files without the sums: the stored or shown figures.
 */
function throughputJudgement(t) {
  if (t.ours?.cpuSeconds && t.equal?.cpuSeconds && t.ours.deliveries && t.equal.deliveries) {
    return { targets: TARGETS, ...judge(t.ours, t.equal) };
  }
  const targets = t.targets ?? TARGETS;
  if (t.ratios && t.met && typeof t.met === 'object') return { targets, ratios: t.ratios, met: t.met };
  const o = t.ours;
  const e = t.equal;
  const ratios = {
    throughput: r2(o.deliveriesPerSecond / e.deliveriesPerSecond),
    postgres: r2(o.cpuMsPerDelivery.postgres / e.cpuMsPerDelivery.postgres),
    total: r2(o.cpuMsPerDelivery.pipeline / e.cpuMsPerDelivery.pipeline),
  };
  return {
    targets,
    ratios,
    met: {
      throughput: ratios.throughput >= targets.throughput,
      postgres: ratios.postgres <= targets.postgres,
      total: ratios.total <= targets.total,
    },
  };
}

/** CPU ms per delivery by process, a row per side; `ratio` = [ours, equal]: a row of ours / equal under them. */
function cpuTable(sides, ratio) {
  const cols = ['api', 'worker', 'postgres', 'autovacuum', 'redis', 'pipeline', 'bench', 'machineBusy'];
  const names = {
    api: 'API process',
    worker: 'worker process',
    postgres: 'Postgres backends',
    autovacuum: 'of which autovacuum',
    redis: 'Redis (shared)',
    pipeline: 'pipeline (sum)',
    bench: 'bench (load + receiver)',
    machineBusy: 'machine',
  };
  const row = (who, c) => ({ run: who, ...Object.fromEntries(cols.map((k) => [names[k], c[k] ?? '—'])) });
  const rows = sides.map(([who, c]) => row(who, c));
  if (ratio) {
    const [o, e] = ratio;
    rows.splice(
      2,
      0,
      row(
        'ours / equal-guarantees',
        Object.fromEntries(cols.map((k) => [k, o[k] && e[k] ? `${r2(o[k] / e[k])} ×` : '—'])),
      ),
    );
  }
  return table(rows);
}

function summary(res) {
  const rows = [];
  const t = res.throughput;
  if (t?.equal) {
    const j = throughputJudgement(t);
    const o = t.ours.cpuMsPerDelivery;
    const e = t.equal.cpuMsPerDelivery;
    rows.push({
      scenario: 'dispatch throughput',
      target: `ours ≥ ${j.targets.throughput} × equal-guarantees (lean)`,
      measured: `${t.ours.deliveriesPerSecond} deliveries/s (N=${t.settings.n} × ${t.settings.rounds ?? 1})`,
      baseline: `${t.equal.deliveriesPerSecond} deliveries/s (bare BullMQ: ${t.baseline.deliveriesPerSecond})`,
      'ratio / figure': `${j.ratios.throughput} ×`,
      result: verdict(j.met.throughput),
    });
    rows.push({
      scenario: 'Postgres CPU per delivery',
      target: `ours ≤ ${j.targets.postgres} × equal-guarantees`,
      measured: `${o.postgres} ms`,
      baseline: `${e.postgres} ms`,
      'ratio / figure': `${j.ratios.postgres} ×`,
      result: verdict(j.met.postgres),
    });
    rows.push({
      scenario: 'CPU per delivery (API + worker + Postgres + Redis)',
      target: `ours ≤ ${j.targets.total} × equal-guarantees`,
      measured: `${o.pipeline} ms (${o.api} + ${o.worker} + ${o.postgres} + ${o.redis})`,
      baseline: `${e.pipeline} ms (${e.api} + ${e.worker} + ${e.postgres} + ${e.redis}; bare BullMQ: ${t.baseline.cpuMsPerDelivery.pipeline})`,
      'ratio / figure': `${j.ratios.total} ×`,
      result: verdict(j.met.total),
    });
  } else if (t) {
    rows.push({
      scenario: 'dispatch throughput',
      target: 'ours ≥ 0.5 × baseline',
      measured: `${t.ours.deliveriesPerSecond} deliveries/s (N=${t.settings.n})`,
      baseline: `${t.baseline.deliveriesPerSecond} deliveries/s`,
      'ratio / figure': r2(t.ratio),
      result: verdict(t.met),
    });
  }
  const l = res.latency;
  if (l) {
    for (const k of ['p50', 'p99']) {
      rows.push({
        scenario: `latency ${k} at ${l.settings.rate}/s`,
        target: `< ${l.target[k]} ms`,
        measured: `${l.ours.fromResponse[k]} ms from response (approvals answered in p99 ${l.ours.approvalResponse.p99} ms)`,
        baseline: `${l.baseline.fromAdd[k]} ms`,
        'ratio / figure': `${l.ours.fromResponse[k]} ms`,
        result: l.sustained ? verdict(l.ours.fromResponse[k] < l.target[k]) : '**missed** (rate not sustained)',
      });
    }
    if (l.info) {
      const i = l.info;
      rows.push({
        scenario: `(latency at ${i.settings.rate}/s, context)`,
        target: `p50 < ${l.target.p50}, p99 < ${l.target.p99} ms`,
        measured: `p50 ${i.ours.fromResponse.p50} ms, p99 ${i.ours.fromResponse.p99} ms`,
        baseline: `p50 ${i.baseline.fromAdd.p50} ms, p99 ${i.baseline.fromAdd.p99} ms`,
        'ratio / figure': '—',
        result: i.wouldMeet ? 'would be met' : i.sustained ? 'would be missed' : 'rate not sustained',
      });
    }
  }
  const f = res.fanout;
  if (f) {
    const worst = (x) => Math.max(...x.rounds.map((r) => r.allReceivedMs));
    rows.push({
      scenario: `fan-out to ${f.settings.webhooks} webhooks`,
      target: f.targetRatio ? `ours ≤ ${f.targetRatio} × bare BullMQ addBulk` : `< ${f.targetMs} ms`,
      measured: `${worst(f.ours)} ms (slowest of ${f.settings.rounds})`,
      baseline:
        `${worst(f.baseline)} ms` +
        (f.equal ? ` (equal-guarantees: ${worst(f.equal)} ms, ${r2(worst(f.equal) / worst(f.baseline))} ×` : '') +
        (f.minimalLog
          ? `; bare + minimal log: ${worst(f.minimalLog)} ms, ${r2(worst(f.minimalLog) / worst(f.baseline))} ×`
          : '') +
        (f.equal ? ')' : ''),
      'ratio / figure': `${r2(worst(f.ours) / worst(f.baseline))} ×`,
      result: verdict(f.met),
    });
    if (f.filtered) {
      rows.push({
        scenario: `fan-out to ${f.settings.webhooks} webhooks, each with a filter`,
        target: `≤ ${f.filterTargetRatio} × without filters`,
        measured: `${worst(f.filtered)} ms (slowest of ${f.settings.rounds})`,
        baseline: `${worst(f.ours)} ms (no filters)`,
        'ratio / figure': `${r2(worst(f.filtered) / worst(f.ours))} × without filters`,
        result: verdict(f.filterMet),
      });
    }
  }
  const iso = res.isolation;
  if (iso) {
    rows.push({
      scenario: 'isolation (slow subscriber)',
      target: `fast p99 ≤ ${iso.target} × without`,
      measured: `${iso.p99With} ms with the slow one`,
      baseline: `${iso.p99Without} ms without`,
      'ratio / figure': r2(iso.ratio),
      result: verdict(iso.met),
    });
  }
  const a = res.api;
  if (a) {
    for (const [name, r] of Object.entries(a.results)) {
      rows.push({
        scenario: `API ${name}`,
        target: `ours ≥ ${r.target ?? a.target} × baseline`,
        measured: `${r.ours.requestsPerSecond} req/s`,
        baseline: `${r.baseline.requestsPerSecond} req/s`,
        'ratio / figure': r2(r.ratio),
        result: verdict(r.met),
      });
    }
  }
  const m = res.memory;
  if (m) {
    rows.push({
      scenario: 'worker memory (throughput run)',
      target: `peak RSS < ${m.targetMB} MB`,
      measured: `${m.ours.peakRssMB} MB`,
      baseline: m.equal
        ? `${m.equal.peakRssMB} MB (equal-guarantees worker), ${m.baseline.peakRssMB} MB (bare worker)`
        : `${m.baseline.peakRssMB} MB (bare worker)`,
      'ratio / figure': `${m.ours.peakRssMB} MB (${r2(m.ours.peakRssMB / m.targetMB)} × the limit)`,
      result: verdict(m.met),
    });
  }
  return table(rows);
}

function render() {
  const res = Object.fromEntries(SCENARIOS.map((s) => [s, latest(s)]).filter(([, v]) => v));
  const any = Object.values(res)[0];
  if (!any) throw new Error(`no results in ${RESULTS_DIR}: run npm run bench first`);
  const commits = [...new Set(Object.values(res).map((r) => `${r.commit}${r.dirty ? ' (+ local changes)' : ''}`))];
  // file names carry the time each result was written
  const dates = Object.values(res)
    .map((r) => /-(\d{4}-\d\d-\d\dT\d\d-\d\d)/.exec(r.file)?.[1]?.replace(/T(\d\d)-(\d\d)/, 'T$1:$2') ?? r.date)
    .sort();
  const m = any.machine;
  const out = [];
  out.push(
    `Measured ${dates[0].slice(0, 16).replace('T', ' ')}–${dates[dates.length - 1].slice(11, 16)} UTC at commit ${commits.join(', ')}, ` +
      `on ${m.nproc} CPUs (${m.cpu}), ${m.memoryMB} MB RAM, ${m.platform}; Node ${m.node}, PostgreSQL ${any.versions?.postgres}, Redis ${any.versions?.redis}.`,
  );
  out.push('');
  out.push('### Summary');
  out.push('');
  out.push(summary(res));
  for (const s of SCENARIOS) {
    const r = res[s];
    if (!r) continue;
    out.push('');
    out.push(`### ${r.title}`);
    out.push('');
    out.push(
      table(
        s === 'throughput' && r.ours?.cpuSeconds
          ? targetRows(r.ours, r.equal, r.baseline, judge(r.ours, r.equal))
          : r.rows,
      ),
    );
    if (s === 'throughput' && r.ours.cpuMsPerDelivery) {
      out.push('');
      out.push(
        'CPU milliseconds per delivery during the timed part, by process (from /proc; Postgres: the backends of that ' +
          "side's database, sampled through the run; Redis is one server shared by both sides and everything else on " +
          'the machine, attributed by the run\'s window; "machine" is everyone\'s work):',
      );
      out.push('');
      const sides = [['ours', r.ours.cpuMsPerDelivery]];
      if (r.equal) sides.push(['equal-guarantees', r.equal.cpuMsPerDelivery]);
      sides.push(['bare BullMQ', r.baseline.cpuMsPerDelivery]);
      out.push(cpuTable(sides, r.equal ? [r.ours.cpuMsPerDelivery, r.equal.cpuMsPerDelivery] : null));
      if (r.ours.walPerDelivery && r.equal?.walPerDelivery) {
        out.push('');
        out.push(
          "WAL written per delivery during the timed part (the server's `pg_stat_wal`, read before and after each run; the sides never run at the same time):",
        );
        out.push('');
        out.push(table(walTable(r.ours.walPerDelivery, r.equal.walPerDelivery)));
      }
      if (r.ours.perRun) {
        out.push('');
        out.push(
          `Deliveries/s of each run (the runs alternate ours, equal, equal, ours, …): ours ${r.ours.perRun.join(', ')}; equal-guarantees ${r.equal.perRun.join(', ')}.`,
        );
      }
      if (r.ours.postgresPerRun && r.equal?.postgresPerRun) {
        out.push('');
        out.push(
          "Ratios of each pair of runs (ours' run i against the equal-guarantees' run i; how far single runs scatter): " +
            `${pairRatios(r.ours, r.equal)}.`,
        );
      }
    }
    if (s === 'fanout' && r.ours.cpuMsPerDelivery) {
      out.push('');
      out.push('CPU milliseconds per delivery during the counted rounds, by process:');
      out.push('');
      const sides = [['ours', r.ours.cpuMsPerDelivery]];
      if (r.equal) sides.push(['equal-guarantees', r.equal.cpuMsPerDelivery]);
      sides.push(['bare BullMQ (its producer runs in the bench)', r.baseline.cpuMsPerDelivery]);
      if (r.minimalLog)
        sides.push(['bare + minimal log (its producer runs in the bench)', r.minimalLog.cpuMsPerDelivery]);
      out.push(cpuTable(sides, r.equal ? [r.ours.cpuMsPerDelivery, r.equal.cpuMsPerDelivery] : null));
    }
    if (s === 'latency' && r.equal?.cpuMsPerDelivery) {
      out.push('');
      out.push(
        `CPU milliseconds per delivery at ${r.settings.rate}/s, by process (at a steady rate the processes' fixed ` +
          'costs, timers and polling, are spread over fewer deliveries than in the throughput run):',
      );
      out.push('');
      out.push(
        cpuTable(
          [
            ['ours', r.ours.cpuMsPerDelivery],
            ['equal-guarantees', r.equal.cpuMsPerDelivery],
          ],
          [r.ours.cpuMsPerDelivery, r.equal.cpuMsPerDelivery],
        ),
      );
    }
    out.push('');
    out.push(`<sub>${r.file}</sub>`);
  }
  return out.join('\n');
}

/** Headline figures of one result directory, for the before/after table. */
function headline(dir) {
  const get = (s) => latest(s, dir);
  const t = get('throughput');
  const l = get('latency');
  const f = get('fanout');
  const i = get('isolation');
  const a = get('api');
  const fig = {};
  if (t) {
    fig[
      t.equal ? 'throughput (deliveries/s; ratio to equal-guarantees)' : 'throughput (deliveries/s; ratio to baseline)'
    ] = `${t.ours.deliveriesPerSecond} (${r2(t.ratio)})`;
    if (t.ours.cpuMsPerDelivery) {
      const c = t.ours.cpuMsPerDelivery;
      fig['CPU ms per delivery: API / worker / Postgres / Redis'] =
        `${c.api} / ${c.worker} / ${c.postgres} / ${c.redis}`;
    }
    if (t.equal?.cpuMsPerDelivery?.postgres) {
      const j = throughputJudgement(t);
      fig['CPU per delivery, ours / equal-guarantees: Postgres; total'] = `${j.ratios.postgres}; ${j.ratios.total}`;
    }
    fig['worker peak RSS (MB)'] = t.ours.workerMemory.peakRssMB;
  }
  if (l) {
    fig[`latency at ${l.settings.rate}/s: approval response p99 (ms)`] = l.ours.approvalResponse.p99;
    fig[`latency at ${l.settings.rate}/s: p50 / p99 from response (ms)`] =
      `${l.ours.fromResponse.p50} / ${l.ours.fromResponse.p99}${l.sustained ? '' : ' (rate not sustained)'}`;
    if (l.info)
      fig[`latency at ${l.info.settings.rate}/s: p50 / p99 from response (ms)`] =
        `${l.info.ours.fromResponse.p50} / ${l.info.ours.fromResponse.p99}${l.info.sustained ? '' : ' (rate not sustained)'}`;
  }
  if (f)
    fig[`fan-out to ${f.settings.webhooks}: slowest round (ms; ratio to bare addBulk)`] =
      `${Math.max(...f.ours.rounds.map((x) => x.allReceivedMs))} (${r2(f.ratio)})`;
  if (i) fig['isolation: fast p99 with / without slow (ms)'] = `${i.p99With} / ${i.p99Without} (${r2(i.ratio)})`;
  if (a)
    for (const [name, r] of Object.entries(a.results))
      fig[`API ${name} (req/s; ratio)`] = `${r.ours.requestsPerSecond} (${r2(r.ratio)})`;
  const any = t ?? l ?? f ?? i ?? a;
  return { fig, commit: any ? `${any.commit}${any.dirty ? '+' : ''}` : '?', settings: t?.settings };
}

function compare(beforeDir, afterDir) {
  const b = headline(beforeDir);
  const a = headline(afterDir);
  const keys = [...new Set([...Object.keys(b.fig), ...Object.keys(a.fig)])];
  const rows = keys.map((k) => ({ figure: k, before: b.fig[k], after: a.fig[k] }));
  return `Throughput at N=${a.settings?.n ?? '?'}; other settings at their defaults.\n\n${table(rows)}`;
}

function writeSection(name, text) {
  const file = join(ROOT, 'BENCHMARKS.md');
  const doc = readFileSync(file, 'utf8');
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const a = doc.indexOf(start);
  const b = doc.indexOf(end);
  if (a < 0 || b < a) throw new Error(`BENCHMARKS.md has no ${start} … ${end} section`);
  writeFileSync(file, `${doc.slice(0, a + start.length)}\n${text}\n${doc.slice(b)}`);
  process.stdout.write(`updated ${file} (${name})\n`);
}

const ci = process.argv.indexOf('--compare');
if (ci >= 0) {
  const text = compare(process.argv[ci + 1], process.argv[ci + 2]);
  if (process.argv.includes('--write')) writeSection('before-after', text);
  else process.stdout.write(`${text}\n`);
} else {
  const text = render();
  if (process.argv.includes('--write')) writeSection('results', text);
  else process.stdout.write(`${text}\n`);
}
