export * from './api-error';
export * from './families';
export * from './family-exception.filter';
export * from './reasons';
