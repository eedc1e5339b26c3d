export { IsOptionalNotNull } from '../common/http/optional-not-null';
