import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DashboardActor } from '../../common/auth';
import { ApiError } from '../../common/errors';
import { LAST_FOUR_DIGIT_YEAR_MS, rfc3339 } from '../../common/http/time';
import { pageCount, pageWindow } from '../paging';
import { parseDayRange } from './date-range';
import { AnalyticsPageDto, AnalyticsRecordDto } from './dto/analytics.dto';

/** Analytics pages hold 10 rows. */
export const ANALYTICS_PAGE_SIZE = 10;

export interface ActivityParams {
  OAuthClientID: string;
  startDay: string;
  startMonth: string;
  startYear: string;
  EndDay: string;
  EndMonth: string;
  EndYear: string;
}

interface Row {
  api_id: string;
  path: string;
  hits: number;
  success: number;
  last_hit: Date;
  latency: number;
  max_latency: number;
  min_latency: number;
  upstream_latency: number;
  max_upstream_latency: number;
  min_upstream_latency: number;
  request_time: number;
  max_request_time: number;
  min_request_time: number;
  api_name: string;
  url: string;
  key: string;
  alias: string;
  iso_country: string;
}

const latest = (col: string) => `(array_agg(${col} ORDER BY last_hit DESC))[1] AS ${col}`;
/**
 * The mean of a metric over the rollups, summed as numeric: rollups stored before latencies were bounded may hold sums
 * near the largest double, and a double sum of two of them overflows. The mean itself is at most their largest value.
 */
const average = (metric: string) => `(sum(${metric}_sum::numeric) / sum(hits))::float8 AS ${metric}`;

@Injectable()
export class AnalyticsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * GET /api/activity/oauthid/...: the client's hourly rollups in the date range, folded into one row
   * per (api_id, path), most hits first. Scoped to the caller's organisation: another organisation's
   * client reads exactly like one with no traffic.
   */
  async byOAuthClient(actor: DashboardActor, params: ActivityParams, p: number | undefined): Promise<AnalyticsPageDto> {
    const range = parseDayRange(
      [params.startDay, params.startMonth, params.startYear],
      [params.EndDay, params.EndMonth, params.EndYear],
    );
    if ('errors' in range) throw new ApiError(400, range.errors, 'invalid_date_range');
    const { offset, limit } = pageWindow(p, ANALYTICS_PAGE_SIZE);

    // The end of 31/12/9999 is the first instant of year 10000, which PostgreSQL cannot read as toISOString writes
    // it; rollups start on whole hours, so the range's last millisecond bounds the same rows.
    const to = new Date(Math.min(range.to.getTime(), LAST_FOUR_DIGIT_YEAR_MS));
    const args: unknown[] = [params.OAuthClientID, range.from.toISOString(), to.toISOString()];
    let where = 'oauth_id = $1 AND hour >= $2 AND hour < $3';
    if (!actor.isSuperUser) {
      args.push(actor.orgId);
      where += ` AND org_id = $${args.length}`;
    }
    // One statement, so the page and the count come from the same snapshot: two queries run side by side could
    // straddle an ingest and answer rows with `pages: 0`, or no rows with `pages: 1`. The count row is always
    // there; its page columns are null past the last page.
    const rows = await this.db.query<(Row & { total: number })[]>(
      `WITH g AS (
         SELECT api_id, path,
                sum(hits)::float8 AS hits,
                coalesce(sum(hits) FILTER (WHERE code < 400), 0)::float8 AS success,
                max(last_hit) AS last_hit,
                ${average('latency')}, max(latency_max) AS max_latency, min(latency_min) AS min_latency,
                ${average('upstream_latency')},
                max(upstream_latency_max) AS max_upstream_latency, min(upstream_latency_min) AS min_upstream_latency,
                ${average('request_time')}, max(request_time_max) AS max_request_time, min(request_time_min) AS min_request_time,
                ${latest('api_name')}, ${latest('url')}, ${latest('key')}, ${latest('alias')}, ${latest('iso_country')}
           FROM analytics_hourly
          WHERE ${where}
          GROUP BY api_id, path)
       SELECT (SELECT count(*)::int FROM g) AS total, page.*
         FROM (SELECT 1) AS one
         LEFT JOIN LATERAL (SELECT * FROM g ORDER BY hits DESC, api_id, path LIMIT ${limit} OFFSET ${offset}) AS page
           ON true`,
      args,
    );
    return {
      data: rows.filter((r) => r.api_id !== null).map(toResponse),
      pages: pageCount(rows[0].total, ANALYTICS_PAGE_SIZE),
    };
  }
}

function toResponse(r: Row): AnalyticsRecordDto {
  return {
    id: {
      day: 0,
      month: 0,
      year: 0,
      hour: 0,
      code: 0,
      api_id: r.api_id,
      api_name: r.api_name,
      path: r.path,
      url: r.url,
      key: r.key,
      alias: r.alias,
      iso_country: r.iso_country,
    },
    hits: r.hits,
    success: r.success,
    error: r.hits - r.success,
    last_hit: rfc3339(r.last_hit),
    latency: r.latency,
    max_latency: r.max_latency,
    min_latency: r.min_latency,
    upstream_latency: r.upstream_latency,
    max_upstream_latency: r.max_upstream_latency,
    min_upstream_latency: r.min_upstream_latency,
    request_time: r.request_time,
    max_request_time: r.max_request_time,
    min_request_time: r.min_request_time,
  };
}
