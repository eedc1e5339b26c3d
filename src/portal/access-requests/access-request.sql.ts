// The statements of the single-request routes (raw SQL: see AccessRequestsService).
// Whole rows (to_jsonb), so a column added to an entity needs no change here.
const REQUEST_AND_APP = `SELECT to_jsonb(ar) AS ar, to_jsonb(app) AS app FROM portal_access_requests ar JOIN portal_apps app ON app.id = ar.app_id WHERE ar.id = $1`;
const CREDENTIALS_IN_FORCE = `(SELECT coalesce(jsonb_agg(to_jsonb(c) ORDER BY c.id), '[]'::jsonb) FROM portal_credentials c WHERE c.access_request_id = $1 AND c.revoked_at IS NULL)`;
/** A request, its app and its credentials in force (the bench's bare baseline runs the same statement). */
export const GET_ONE = `SELECT to_jsonb(ar) AS ar, to_jsonb(app) AS app, ${CREDENTIALS_IN_FORCE} AS credentials
                   FROM portal_access_requests ar JOIN portal_apps app ON app.id = ar.app_id WHERE ar.id = $1`;
/** Holds the request's row for the transaction. */
export const LOCK_ONE = `${REQUEST_AND_APP} FOR UPDATE OF ar`;
/** Run after LOCK_ONE: a statement of its own, so it sees whatever the holder of the lock before us committed. */
export const CREDENTIALS_OF = `SELECT ${CREDENTIALS_IN_FORCE} AS credentials`;
// FOR SHARE: the app cannot be deleted until the new request is committed.
export const APP_FOR_SHARE = `SELECT to_jsonb(app) AS app FROM portal_apps app WHERE app.id = $1 FOR SHARE`;
export const SET_STATUS = `
  WITH revoked AS (
    UPDATE portal_credentials SET revoked_at = $3 WHERE $4::boolean AND access_request_id = $1 AND revoked_at IS NULL)
  UPDATE portal_access_requests ar SET status = $2, updated_at = $3 WHERE ar.id = $1 RETURNING to_jsonb(ar) AS row`;

