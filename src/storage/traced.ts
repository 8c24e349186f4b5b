import { inSpan, type TraceSpan } from '../core/tracing'
import type { ObjectStore } from './store'

/**
 * A store whose requests are spans of one call (`storage get`, `storage put`, …), with the driver and
 * the key: made per call, only when that call's span records, so an untraced call uses the store as is.
 */
export function tracedStore(store: ObjectStore, span: TraceSpan): ObjectStore {
  const request = <T>(operation: string, key: string, work: () => Promise<T>) =>
    inSpan(span, `storage ${operation}`, { 'toolport.storage.driver': store.driver, 'toolport.storage.key': key }, () =>
      work(),
    )
  return {
    driver: store.driver,
    get: (key) => request('get', key, () => store.get(key)),
    getWithin: (key, maxBytes) => request('get', key, () => store.getWithin(key, maxBytes)),
    getStream: (key) => request('get', key, () => store.getStream(key)),
    head: (key) => request('head', key, () => store.head(key)),
    put: (key, body, options) => request('put', key, () => store.put(key, body, options)),
    create: (key, body, options) => request('put', key, () => store.create(key, body, options)),
    list: (prefix, options) => request('list', prefix, () => store.list(prefix, options)),
    delete: (key, options) => request('delete', key, () => store.delete(key, options)),
    copy: (fromKey, toKey) => request('copy', toKey, () => store.copy(fromKey, toKey)),
    check: () => store.check(),
    ...(store.presignGet ? { presignGet: store.presignGet.bind(store) } : {}),
  }
}
