export * from './dashboard-actor';
export * from './decorators';
export * from './guards';
export * from './permissions';
