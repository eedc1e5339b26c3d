import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors';
import { parseAnalyticsBatch } from './analytics-record';

export interface IngestResult {
  status: 'ok';
  ingested: number;
}

/** Latest-hit values replace the stored ones only when the batch holds a newer hit. */
const latest = (col: string) =>
  `${col} = CASE WHEN EXCLUDED.last_hit >= r.last_hit THEN EXCLUDED.${col} ELSE r.${col} END`;
const folded = (metric: string) =>
  `${metric}_sum = r.${metric}_sum + EXCLUDED.${metric}_sum, ${metric}_min = LEAST(r.${metric}_min, EXCLUDED.${metric}_min), ${metric}_max = GREATEST(r.${metric}_max, EXCLUDED.${metric}_max)`;

/**
 * Folds a batch into the hourly rollups with one statement: the records go in as column arrays,
 * are grouped per (client, org, hour, api, path, code) and upserted in key order (so concurrent
 * batches lock rows in the same order).
 */
const UPSERT = `
  INSERT INTO analytics_hourly AS r (
    oauth_id, org_id, hour, api_id, path, code, hits,
    latency_sum, latency_min, latency_max,
    upstream_latency_sum, upstream_latency_min, upstream_latency_max,
    request_time_sum, request_time_min, request_time_max,
    last_hit, api_name, url, key, alias, iso_country)
  SELECT oauth_id, org_id, date_trunc('hour', ts, 'UTC') AS hour, api_id, path, code, count(*),
         sum(latency), min(latency), max(latency),
         sum(upstream_latency), min(upstream_latency), max(upstream_latency),
         sum(request_time), min(request_time), max(request_time),
         max(ts),
         (array_agg(api_name ORDER BY ts DESC))[1], (array_agg(url ORDER BY ts DESC))[1], (array_agg(key ORDER BY ts DESC))[1],
         (array_agg(alias ORDER BY ts DESC))[1], (array_agg(iso_country ORDER BY ts DESC))[1]
    FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::integer[],
                $7::float8[], $8::float8[], $9::float8[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
         AS x(ts, oauth_id, org_id, api_id, path, code, latency, upstream_latency, request_time, api_name, url, key, alias, iso_country)
   GROUP BY oauth_id, org_id, date_trunc('hour', ts, 'UTC'), api_id, path, code
   ORDER BY oauth_id, org_id, hour, api_id, path, code
  ON CONFLICT (oauth_id, org_id, hour, api_id, path, code) DO UPDATE SET
    hits = r.hits + EXCLUDED.hits,
    ${folded('latency')}, ${folded('upstream_latency')}, ${folded('request_time')},
    ${latest('api_name')}, ${latest('url')}, ${latest('key')}, ${latest('alias')}, ${latest('iso_country')},
    last_hit = GREATEST(r.last_hit, EXCLUDED.last_hit)`;

@Injectable()
export class AnalyticsIngestService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async ingest(body: unknown): Promise<IngestResult> {
    const { records, errors } = parseAnalyticsBatch(body);
    if (errors.length) throw new ApiError(400, errors, 'invalid_analytics');
    if (records.length) {
      await this.db.query(UPSERT, [
        records.map((r) => r.timestamp.toISOString()),
        records.map((r) => r.oauth_id),
        records.map((r) => r.org_id),
        records.map((r) => r.api_id),
        records.map((r) => r.path),
        records.map((r) => r.code),
        records.map((r) => r.latency),
        records.map((r) => r.upstream_latency),
        records.map((r) => r.request_time),
        records.map((r) => r.api_name),
        records.map((r) => r.url),
        records.map((r) => r.key),
        records.map((r) => r.alias),
        records.map((r) => r.iso_country),
      ]);
    }
    return { status: 'ok', ingested: records.length };
  }
}
