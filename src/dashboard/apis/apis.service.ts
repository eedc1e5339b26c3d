import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DashboardActor } from '../../common/auth';
import { AppConfig } from '../../config';
import { ApiListEntry } from '../../gateway/apis/projection';
import { pageCount, pageWindowOrAll } from '../paging';
import { buildApiListQuery, commaList } from './api-list.query';
import { baseApisOnly } from './dto/list-apis-query.dto';
import { ListApisQueryDto } from './dto/list-apis-query.dto';

export interface ApiListResponse {
  apis: { api_definition: ApiListEntry }[];
  pages: number;
}

@Injectable()
export class ApisService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly config: AppConfig,
  ) {}

  /**
   * GET /api/apis: the caller's organisation's APIs as 2.7 list entries, filtered, sorted and paged in SQL.
   * A `p` of 0 or less returns every match at once; `pages` is still counted in pages of the configured size.
   */
  async list(actor: DashboardActor, query: ListApisQueryDto): Promise<ApiListResponse> {
    const size = this.config.dashboard.pageSize;
    const { offset, limit } = pageWindowOrAll(query.p, size);
    const [text, params] = buildApiListQuery(
      {
        orgId: actor.isSuperUser ? undefined : actor.orgId,
        apiType: query.api_type,
        categories: commaList(query.category),
        authTypes: commaList(query.auth_type),
        baseOnly: baseApisOnly(query.base_apis),
        q: query.q,
      },
      query.sort ?? '-created_at',
      offset,
      limit,
    );
    const [{ total, apis }] = await this.db.query<{ total: number; apis: ApiListEntry[] }[]>(text, params);
    return { apis: apis.map((entry) => ({ api_definition: entry })), pages: pageCount(total, size) };
  }

  /** GET /api/apis/groups: every category of the caller's organisation → ids of its APIs. */
  async groups(actor: DashboardActor): Promise<Record<string, string[]>> {
    const scoped = !actor.isSuperUser;
    const rows: { category: string; ids: string[] }[] = await this.db.query(
      `SELECT c AS category, array_agg(d.id ORDER BY d.created_at, d.id) AS ids
         FROM api_definitions d CROSS JOIN LATERAL unnest(d.categories) AS c
        ${scoped ? 'WHERE d.org_id = $1' : ''}
        GROUP BY c ORDER BY c`,
      scoped ? [actor.orgId] : [],
    );
    // fromEntries defines own properties, so a category named "__proto__" is just a key
    return Object.fromEntries(rows.map((r) => [r.category, r.ids]));
  }
}
