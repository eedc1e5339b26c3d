import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { randomHex } from '../../common/crypto/secret-box';
import { DEFAULT_BODY_LIMIT } from '../../common/http/input-policy';
import { OasApiError } from './oas-apis.errors';
import { deepCopy, ensureObject, EXTENSION, extensionOf, isObject, OasDocument, pick } from './oas-document';
import { applyImportParams, keepStoredOrg, mergeForPatch, operationKeyErrors, parseImportParams } from './oas-patch';
import { OasValidationPool } from './oas-validation.pool';
import { API_ID_PATTERN, validateExtension } from './oas.validator';
import { projectDefinition } from './projection';

export type WriteAction = 'added' | 'modified' | 'deleted';

/** Success body of every write: the id, `status: ok`, the action and an empty `key_hash`. */
export interface OasWriteResult {
  key: string;
  status: 'ok';
  action: WriteAction;
  key_hash: string;
}

/** Definition writes are serialised so the versioning flags (is_child) computed across rows stay right. */
const WRITE_LOCK = 4242_0201;

const result = (key: string, action: WriteAction): OasWriteResult => ({ key, status: 'ok', action, key_hash: '' });

/** An apiID of blanks only (`/gateway/apis/oas/%20`) names nothing: a 400, as the gateway answers, before a lookup. */
function mustName(id: string, operation: 'update' | 'patch' | 'delete'): void {
  if (id.trim() === '') throw OasApiError.missingId(operation);
}

@Injectable()
export class OasApisService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly validation: OasValidationPool,
  ) {}

  async create(body: unknown): Promise<OasWriteResult> {
    const doc = await this.validDocument(body);
    const ext = extensionOf(doc);
    const extErrors = validateExtension(doc[EXTENSION]);
    if (extErrors.length) throw OasApiError.invalidDocument(extErrors);
    const given = pick(ext, 'info', 'id');
    const id = typeof given === 'string' ? given : randomHex(16);
    const stored = withId(doc, id);
    await this.db.transaction(async (m) => {
      await lock(m);
      const exists = await m.query(`SELECT 1 FROM api_definitions WHERE id = $1`, [id]);
      if (exists.length) throw OasApiError.alreadyExists(id);
      await this.write(m, id, stored, 'insert', []);
    });
    return result(id, 'added');
  }

  async list(): Promise<OasDocument[]> {
    const rows: { oas: OasDocument }[] = await this.db.query(`SELECT oas FROM api_definitions ORDER BY created_at, id`);
    return rows.map((r) => r.oas);
  }

  async get(id: string): Promise<OasDocument> {
    const rows: { oas: OasDocument }[] = await this.db.query(`SELECT oas FROM api_definitions WHERE id = $1`, [id]);
    if (!rows.length) throw OasApiError.notFound();
    return rows[0].oas;
  }

  /** PUT: the body (extension required) replaces the stored document. */
  async replace(id: string, body: unknown): Promise<OasWriteResult> {
    mustName(id, 'update');
    await this.mustExist(id);
    const doc = await this.validDocument(body);
    checkBodyId(doc, id);
    const extErrors = validateExtension(doc[EXTENSION]);
    if (extErrors.length) throw OasApiError.invalidDocument(extErrors);
    await this.db.transaction(async (m) => {
      await lock(m);
      const current = await this.load(m, id);
      const next = withId(doc, id);
      keepStoredOrg(current.oas, next);
      await this.write(m, id, next, 'update', current.childIds);
    });
    return result(id, 'modified');
  }

  /** PATCH: the merge rules (mergeForPatch), then the import query parameters. */
  async patch(id: string, body: unknown, query: Record<string, unknown>): Promise<OasWriteResult> {
    mustName(id, 'patch');
    await this.mustExist(id);
    const doc = await this.validDocument(body);
    checkBodyId(doc, id);
    const { params, errors } = parseImportParams(query);
    if (errors.length) throw OasApiError.invalidParameters(errors);
    await this.db.transaction(async (m) => {
      await lock(m);
      const current = await this.load(m, id);
      const merged = mergeForPatch(current.oas, doc);
      const keyErrors = operationKeyErrors(merged, params);
      if (keyErrors.length) throw OasApiError.invalidParameters(keyErrors);
      const next = withId(applyImportParams(merged, params), id);
      const extErrors = validateExtension(next[EXTENSION]);
      if (extErrors.length) throw OasApiError.invalidDocument(extErrors);
      await this.write(m, id, next, 'update', current.childIds);
    });
    return result(id, 'modified');
  }

  async remove(id: string): Promise<OasWriteResult> {
    mustName(id, 'delete');
    await this.db.transaction(async (m) => {
      await lock(m);
      const current = await this.load(m, id);
      await m.query(`DELETE FROM api_definitions WHERE id = $1`, [id]);
      await refreshChildFlags(m, current.childIds);
    });
    return result(id, 'deleted');
  }

  private async validDocument(body: unknown): Promise<OasDocument> {
    if (body === undefined || body === null) throw OasApiError.malformed();
    const reasons = await this.validation.reasons(body);
    if (reasons.length) throw OasApiError.invalidDocument(reasons);
    return body as OasDocument;
  }

  private async mustExist(id: string): Promise<void> {
    if (!API_ID_PATTERN.test(id)) throw OasApiError.notFound();
    const rows = await this.db.query(`SELECT 1 FROM api_definitions WHERE id = $1`, [id]);
    if (!rows.length) throw OasApiError.notFound();
  }

  private async load(m: EntityManager, id: string): Promise<{ oas: OasDocument; childIds: string[] }> {
    const rows: { oas: OasDocument; child_ids: string[] }[] = await m.query(
      `SELECT oas, child_ids FROM api_definitions WHERE id = $1`,
      [id],
    );
    if (!rows.length) throw OasApiError.notFound();
    return { oas: rows[0].oas, childIds: rows[0].child_ids };
  }

  /**
   * Stores the document with its projected columns, then refreshes the child flags it affects. A document larger
   * than a request body may be (the import parameters add to every operation) is refused: read back, it could
   * never be sent again.
   */
  private async write(
    m: EntityManager,
    id: string,
    doc: OasDocument,
    mode: 'insert' | 'update',
    previousChildIds: string[],
  ): Promise<void> {
    const json = JSON.stringify(doc);
    const bytes = Buffer.byteLength(json);
    if (bytes > DEFAULT_BODY_LIMIT) throw OasApiError.tooLargeToStore(bytes, DEFAULT_BODY_LIMIT);
    const cols = projectDefinition(id, doc);
    const isChild = `EXISTS (SELECT 1 FROM api_definitions b WHERE b.org_id = $2 AND b.child_ids @> ARRAY[$1::text] AND b.id <> $1)`;
    const params = [
      id,
      cols.orgId,
      cols.name,
      cols.apiType,
      cols.categories,
      cols.authTypes,
      cols.childIds,
      json,
      JSON.stringify(cols.entry),
    ];
    if (mode === 'insert') {
      await m.query(
        `INSERT INTO api_definitions (id, org_id, name, api_type, categories, auth_types, child_ids, is_child, oas, list_entry, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, ${isChild}, $8::json, $9::json, now(), now())`,
        params,
      );
    } else {
      await m.query(
        `UPDATE api_definitions SET org_id = $2, name = $3, api_type = $4, categories = $5, auth_types = $6, child_ids = $7,
                is_child = ${isChild}, oas = $8::json, list_entry = $9::json, updated_at = now()
          WHERE id = $1`,
        params,
      );
    }
    await refreshChildFlags(
      m,
      [...new Set([...previousChildIds, ...cols.childIds])].filter((c) => c !== id),
    );
  }
}

async function lock(m: EntityManager): Promise<void> {
  await m.query(`SELECT pg_advisory_xact_lock($1)`, [WRITE_LOCK]);
}

/** Recomputes is_child of the given definitions: listed as a version by another definition of their organisation. */
async function refreshChildFlags(m: EntityManager, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await m.query(
    `UPDATE api_definitions a
        SET is_child = EXISTS (SELECT 1 FROM api_definitions b WHERE b.org_id = a.org_id AND b.child_ids @> ARRAY[a.id] AND b.id <> a.id)
      WHERE a.id = ANY($1::text[])`,
    [ids],
  );
}

/** A body naming another API in its extension cannot update this one. */
function checkBodyId(doc: OasDocument, id: string): void {
  const given = pick(doc, EXTENSION, 'info', 'id');
  if (given !== undefined && given !== id) throw OasApiError.idMismatch();
}

/** A copy of the document whose extension records the API's id (as the gateway reads it back). */
function withId(doc: OasDocument, id: string): OasDocument {
  const copy = deepCopy(doc);
  if (isObject(copy[EXTENSION])) ensureObject(copy, EXTENSION, 'info').id = id;
  return copy;
}
