/** What the datasets' routes need of the process. */
import type { RouteContext } from '../../../platform/http/context.ts';
import type { MaskingCatalog } from '../../masking/catalog.ts';
import type { IngestionStore } from '../../write-model/store.ts';

export interface DatasetsRouteContext extends RouteContext {
  /** Where dataset run items are written (the analytics store). */
  store: IngestionStore;
  /** Each project's masking rules, applied to the dataset items a trace becomes. */
  masking: MaskingCatalog;
}
