import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One hour of one OAuth client's requests to one path of one API with one status code: the unit
 * analytics are stored in (raw records are folded in on ingest and not kept).
 */
@Entity({ name: 'analytics_hourly' })
export class AnalyticsRollupEntity {
  @PrimaryColumn({ name: 'oauth_id', type: 'text' }) oauthId: string;
  @PrimaryColumn({ name: 'org_id', type: 'text' }) orgId: string;
  /** Start of the hour, UTC. */
  @PrimaryColumn({ type: 'timestamptz' }) hour: Date;
  @PrimaryColumn({ name: 'api_id', type: 'text' }) apiId: string;
  @PrimaryColumn({ type: 'text' }) path: string;
  @PrimaryColumn({ type: 'integer' }) code: number;

  @Column({ type: 'bigint' }) hits: string;
  @Column({ name: 'latency_sum', type: 'double precision' }) latencySum: number;
  @Column({ name: 'latency_min', type: 'double precision' }) latencyMin: number;
  @Column({ name: 'latency_max', type: 'double precision' }) latencyMax: number;
  @Column({ name: 'upstream_latency_sum', type: 'double precision' }) upstreamLatencySum: number;
  @Column({ name: 'upstream_latency_min', type: 'double precision' }) upstreamLatencyMin: number;
  @Column({ name: 'upstream_latency_max', type: 'double precision' }) upstreamLatencyMax: number;
  @Column({ name: 'request_time_sum', type: 'double precision' }) requestTimeSum: number;
  @Column({ name: 'request_time_min', type: 'double precision' }) requestTimeMin: number;
  @Column({ name: 'request_time_max', type: 'double precision' }) requestTimeMax: number;
  @Column({ name: 'last_hit', type: 'timestamptz' }) lastHit: Date;

  /** Values of the most recent hit in the hour. */
  @Column({ name: 'api_name', type: 'text', default: '' }) apiName: string;
  @Column({ type: 'text', default: '' }) url: string;
  @Column({ type: 'text', default: '' }) key: string;
  @Column({ type: 'text', default: '' }) alias: string;
  @Column({ name: 'iso_country', type: 'text', default: '' }) isoCountry: string;
}
