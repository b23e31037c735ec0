/** The monitoring pack's files (manifests/monitoring), read for the tests. */
import { readFile } from 'node:fs/promises';

import { parse } from 'yaml';

export const MONITORING = new URL('../../manifests/monitoring/', import.meta.url).pathname;

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  annotations?: Record<string, string>;
}

export interface RuleGroups {
  groups: { name: string; rules: Rule[] }[];
}

/** spec of the PrometheusRule: the groups, in the rule file format promtool reads. */
export async function ruleGroups(): Promise<RuleGroups> {
  const rule = parse(await readFile(`${MONITORING}prometheus-rule.yaml`, 'utf8')) as {
    spec: RuleGroups;
  };
  return rule.spec;
}

export const alerts = (groups: RuleGroups): Rule[] =>
  groups.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);

/** Every PromQL expression of the dashboard's panels. */
export async function dashboardExpressions(): Promise<string[]> {
  const dashboard = JSON.parse(await readFile(`${MONITORING}dashboard.json`, 'utf8')) as {
    panels: { targets?: { expr: string }[] }[];
  };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}
