import { createParamDecorator, ExecutionContext } from '@nestjs/common';

/** The authenticated dashboard user a request acts as. */
export interface DashboardActor {
  userId: string;
  orgId: string;
  /** Empty org_id and IsAdmin: acts across organisations. */
  isSuperUser: boolean;
  permissions: Record<string, string>;
}

export const ACTOR_KEY = 'dashboardActor';

export const Actor = createParamDecorator((_data: unknown, ctx: ExecutionContext): DashboardActor => {
  const req = ctx.switchToHttp().getRequest<Record<string, unknown>>();
  return req[ACTOR_KEY] as DashboardActor;
});
