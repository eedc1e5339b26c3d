// The statements of the single-request routes (raw SQL: see AccessRequestsService).
// Whole rows (to_jsonb), so a column added to an entity needs no change here.
const CREDENTIALS_IN_FORCE = `(SELECT coalesce(jsonb_agg(to_jsonb(c) ORDER BY c.id), '[]'::jsonb) FROM portal_credentials c WHERE c.access_request_id = $1 AND c.revoked_at IS NULL)`;
/** A request, its app and its credentials in force (the bench's bare baseline runs the same statement). */
export const GET_ONE = `SELECT to_jsonb(ar) AS ar, to_jsonb(app) AS app, ${CREDENTIALS_IN_FORCE} AS credentials
                   FROM portal_access_requests ar JOIN portal_apps app ON app.id = ar.app_id WHERE ar.id = $1`;
/** A request and its app, for a status change (which needs the credentials in force only when nothing changes). */
export const ONE_WITH_APP = `SELECT to_jsonb(ar) AS ar, to_jsonb(app) AS app
                   FROM portal_access_requests ar JOIN portal_apps app ON app.id = ar.app_id WHERE ar.id = $1`;
/** The requests of several apps ($1), each with its credentials in force, by ID. */
export const OF_APPS = `SELECT to_jsonb(ar) AS ar,
                          (SELECT coalesce(jsonb_agg(to_jsonb(c) ORDER BY c.id), '[]'::jsonb) FROM portal_credentials c
                            WHERE c.access_request_id = ar.id AND c.revoked_at IS NULL) AS credentials
                     FROM portal_access_requests ar WHERE ar.app_id = ANY($1::int[]) ORDER BY ar.id`;
/** An app, read without a lock (before an identity provider is called). */
export const APP_ONE = `SELECT to_jsonb(app) AS app FROM portal_apps app WHERE app.id = $1`;
// FOR SHARE: the app cannot be deleted until the new request is committed.
export const APP_FOR_SHARE = `SELECT to_jsonb(app) AS app FROM portal_apps app WHERE app.id = $1 FOR SHARE`;
/**
 * The first part of a status change, which is one statement (and so one transaction by itself, or one part of
 * the request transaction): `changed` sets status $2 and updated_at $3 only if the request $1 still has the status
 * it was read with ($4). The UPDATE takes the row lock; a racing change that committed first makes it match no
 * row (Postgres re-checks the condition on the newest version), so `changed` is empty, the statement's other
 * parts (which write only for a row of `changed`) write nothing either, and the caller gets no row back and reads
 * again.
 */
export const STATUS_CHANGE = `
  changed AS (
    UPDATE portal_access_requests ar SET status = $2, updated_at = $3 WHERE ar.id = $1 AND ar.status = $4 RETURNING ar.id)`;
/** The part of a status change that revokes the request's credentials (only in a transition that revokes them). */
export const REVOKE_CREDENTIALS = `
  revoked AS (
    UPDATE portal_credentials c SET revoked_at = $3 FROM changed WHERE c.access_request_id = changed.id AND c.revoked_at IS NULL)`;
/** The condition under which the other parts of a status change write. */
export const STATUS_CHANGED = `EXISTS (SELECT 1 FROM changed)`;
/**
 * Locks every request of app $1 before the app is deleted, as LOCK_FOR_DELETE locks one: a statement of its own,
 * so that REGISTERED_OF_APP, run next with a fresh snapshot, sees the credential of an approval that committed
 * while this waited for its request. (Read in this statement, the credentials would be those of the snapshot taken
 * before the wait, and that approval's client would stay registered at the identity provider.)
 */
export const LOCK_REQUESTS_OF_APP = `SELECT id FROM portal_access_requests WHERE app_id = $1 FOR UPDATE`;
/**
 * The credentials registered at the identity provider by DCR of every request of app $1 (revoked ones included),
 * read once LOCK_REQUESTS_OF_APP holds the requests: an app about to be deleted takes its requests and their
 * credentials with it.
 */
export const REGISTERED_OF_APP = `
  SELECT to_jsonb(c) AS row FROM portal_credentials c
   WHERE c.dcr_response_encrypted IS NOT NULL
     AND c.access_request_id IN (SELECT id FROM portal_access_requests WHERE app_id = $1)`;
/**
 * Locks a request before it is deleted, so that an approval racing the delete has either committed its credential
 * (which the next statement, with a fresh snapshot, then sees) or will find the request gone.
 */
export const LOCK_FOR_DELETE = `SELECT id FROM portal_access_requests WHERE id = $1 FOR UPDATE`;
/**
 * Deletes a locked request (its credentials go by ON DELETE CASCADE) and returns the credentials registered at the
 * identity provider by DCR, revoked ones included: their clients still exist there, and after this nobody holds
 * their registration access token.
 */
export const DELETE_RETURNING_REGISTERED = `
  WITH registered AS (
    SELECT to_jsonb(c) AS row FROM portal_credentials c WHERE c.access_request_id = $1 AND c.dcr_response_encrypted IS NOT NULL),
  deleted AS (DELETE FROM portal_access_requests WHERE id = $1)
  SELECT row FROM registered`;
