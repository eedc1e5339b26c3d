export * from './dashboard-actor.decorator';
export * from './auth.decorator';
export * from './auth.guard';
export * from './permissions';
