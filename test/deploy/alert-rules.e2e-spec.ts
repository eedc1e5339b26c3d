import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { parse } from 'yaml';
import { ATTEMPT_ERRORS, ATTEMPT_OUTCOMES, NO_ERROR } from '../../src/webhooks/attempt-outcome';
import { DISABLED_REASONS } from '../../src/webhooks/operational-events';
import { MetricsRegistry } from '../../src/metrics/metrics.registry';
import { useService } from '../helpers/use-service';

const FILE = join(__dirname, '..', '..', 'deploy', 'prometheus', 'alerts.yml');

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** A label matcher of an expression: its label, operator and value (without quotes). */
interface Matcher {
  label: string;
  op: string;
  value: string;
}

/** What a PromQL expression reads: the metrics it selects, every label it names, its matchers, and parse errors. */
function readExpression(expr: string) {
  const text = (n: { from: number; to: number }) => expr.slice(n.from, n.to);
  const metrics = new Set<string>();
  const labels = new Set<string>();
  const matchers: Matcher[] = [];
  const errors: string[] = [];
  parser.parse(expr).iterate({
    enter: (n) => {
      if (n.type.isError) errors.push(`at ${n.from}: ${JSON.stringify(expr.slice(n.from, n.from + 20))}`);
      if (n.name === 'Identifier' && n.node.parent?.name === 'VectorSelector') metrics.add(text(n));
      if (n.name === 'LabelName') labels.add(text(n));
      if (n.name === 'UnquotedLabelMatcher') {
        const label = n.node.getChild('LabelName')!;
        const op = n.node.getChild('MatchOp')!;
        const value = n.node.getChild('StringLiteral')!;
        matchers.push({ label: text(label), op: text(op), value: JSON.parse(text(value)) });
      }
    },
  });
  return { metrics, labels, matchers, errors };
}

/** The values a label of ours takes: a matcher naming another (a typo) would never match, and its alert never fire. */
const VOCABULARY: Record<string, readonly string[]> = {
  outcome: ATTEMPT_OUTCOMES,
  error: [...ATTEMPT_ERRORS, NO_ERROR],
  reason: DISABLED_REASONS,
};

/** The words a matcher's value names: the value, or each alternative of a regex made of plain words. */
function wordsOf(m: Matcher): string[] {
  if (m.op === '=' || m.op === '!=') return [m.value];
  return m.value.split('|').filter((w) => /^\w+$/.test(w));
}

const rules: Rule[] = parse(readFileSync(FILE, 'utf8')).groups.flatMap((g: { rules: Rule[] }) => g.rules);

describe('the Prometheus alerting rules (deploy/prometheus/alerts.yml)', () => {
  const t = useService();
  /** The metrics a process of ROLE=all registers, by name, with their label names. */
  const registered = () =>
    new Map(
      t.app
        .get(MetricsRegistry)
        .getMetricsAsArray()
        .map((m) => [m.name, (m as unknown as { labelNames: string[] }).labelNames ?? []]),
    );

  it('has rules, each named once, with a severity, a summary and a description', () => {
    expect(rules.length).toBeGreaterThanOrEqual(5);
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
    for (const r of rules) {
      expect(r.alert).toMatch(/^[A-Z][A-Za-z]+$/);
      expect(['warning', 'critical']).toContain(r.labels.severity);
      expect(r.annotations.summary).toEqual(expect.any(String));
      expect(r.annotations.description).toEqual(expect.any(String));
      if (r.for !== undefined) expect(r.for).toMatch(/^\d+[smh]$/);
    }
  });

  it.each(rules.map((r) => [r.alert, r] as const))(
    '%s: its expression parses, and reads only metrics, labels and label values the service has',
    (_name, rule) => {
      const read = readExpression(rule.expr);
      expect(read.errors).toEqual([]);
      expect(read.metrics.size).toBeGreaterThan(0);
      const metrics = registered();
      for (const name of read.metrics) expect([...metrics.keys()]).toContain(name);
      const labelNames = new Set([...read.metrics].flatMap((name) => metrics.get(name) ?? []));
      for (const label of read.labels) expect([...labelNames]).toContain(label);
      for (const m of read.matchers.filter((x) => VOCABULARY[x.label]))
        for (const word of wordsOf(m)) expect(VOCABULARY[m.label]).toContain(word);
    },
  );

  it('catches the mistakes it is there for', () => {
    expect(readExpression('max(foo) >').errors).not.toEqual([]);
    const read = readExpression('sum by (reason) (rate(webhooks_disabled_total{reason=~"gone|failng"}[5m]))');
    expect([...read.metrics]).toEqual(['webhooks_disabled_total']);
    expect([...read.labels]).toEqual(['reason']);
    expect(wordsOf(read.matchers[0])).toEqual(['gone', 'failng']);
    expect(VOCABULARY.reason).not.toContain('failng');
  });
});
