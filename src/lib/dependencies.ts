/**
 * Calls to D1, KV and the Durable Objects fail closed and loud (docs/security.md#dependencies-that-fail): a call that
 * throws or does not reply in time is a 503 with `Retry-After`. Nothing is half-written, because writes that belong
 * together are one D1 batch or one Durable Object call.
 */
export class DependencyError extends Error {
  constructor(
    readonly dependency: string,
    options: { cause: unknown },
  ) {
    super(`${dependency} failed or did not answer`, options);
    this.name = 'DependencyError';
  }
}

/** Seconds a client is asked to wait before retrying after a 503. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 2;

const noReply = (dependency: string, timeoutMs: number) =>
  new DependencyError(dependency, { cause: new Error(`no answer within ${timeoutMs} ms`) });

/**
 * One timer for every call of a request to a dependency (D1 makes several): it starts
 * with the first call and rejects `timeoutMs` later. A timer per call costs a
 * `setTimeout` and a `clearTimeout` each, which shows in a D1 read's CPU time.
 */
export class Deadline {
  #expired?: Promise<never>;

  constructor(
    private readonly dependency: string,
    private readonly timeoutMs: number,
  ) {}

  get expired(): Promise<never> {
    if (!this.#expired) {
      this.#expired = new Promise<never>((_, reject) => {
        setTimeout(() => reject(noReply(this.dependency, this.timeoutMs)), this.timeoutMs);
      });
      // It fires whether or not a call still waits on it.
      this.#expired.catch(() => undefined);
    }
    return this.#expired;
  }
}

/**
 * `work()`'s result, or a `DependencyError` when it throws or does not reply in time:
 * within `timeout` ms of this call, or before a request's `Deadline`.
 */
export async function callDependency<T>(
  dependency: string,
  work: () => Promise<T>,
  timeout: number | Deadline,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired =
    typeof timeout === 'number'
      ? new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(noReply(dependency, timeout)), timeout);
        })
      : timeout.expired;
  try {
    return await Promise.race([work(), expired]);
  } catch (error) {
    if (error instanceof DependencyError) throw error;
    throw new DependencyError(dependency, { cause: error });
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** A KV namespace whose every call goes through `callDependency`. */
function guardKv(kv: KVNamespace, timeoutMs: number): KVNamespace {
  return new Proxy(kv, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => callDependency('KV', () => Reflect.apply(value, target, args), timeoutMs);
    },
  });
}

/** A Durable Object stub whose every remote call goes through `callDependency`. */
function guardStub<T extends object>(stub: T, name: string, timeoutMs: number): T {
  return new Proxy(stub, {
    get(target, property) {
      if (property === 'id' || property === 'name' || typeof property === 'symbol')
        return Reflect.get(target, property);
      const method: unknown = Reflect.get(target, property);
      if (typeof method !== 'function') return method;
      // Reflect.apply: on an RPC stub, `method.apply` would itself be a remote method name.
      return (...args: unknown[]) => callDependency(name, () => Reflect.apply(method, target, args), timeoutMs);
    },
  });
}

/** A Durable Object namespace whose stubs are guarded; ids are made as usual. */
function guardNamespace<T extends DurableObjectNamespace>(namespace: T, name: string, timeoutMs: number): T {
  return new Proxy(namespace, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (property === 'get' || property === 'getByName') {
        return (...args: unknown[]) => guardStub<object>(Reflect.apply(value, target, args), name, timeoutMs);
      }
      return value.bind(target);
    },
  });
}

const guarded = new WeakMap<object, object>();

/**
 * The Worker's bindings with KV and every Durable Object namespace guarded, each call
 * failing after `timeoutMs` (D1 is guarded by the instrumented client of db/client.ts,
 * which also tells SQL errors, a bug, from a failing database). Made once per env object.
 */
export function guardBindings<E extends object>(env: E, timeoutMs: number): E {
  const known = guarded.get(env);
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- stored below for this very env
  if (known) return known as E;
  const entries = Object.entries(env).map(([key, value]: [string, unknown]) => {
    if (isKv(value)) return [key, guardKv(value, timeoutMs)];
    if (isNamespace(value)) return [key, guardNamespace(value, `Durable Object ${key}`, timeoutMs)];
    return [key, value];
  });
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the same keys, each value of the same binding type
  const result = Object.fromEntries(entries) as E;
  guarded.set(env, result);
  return result;
}

const isKv = (value: unknown): value is KVNamespace =>
  typeof value === 'object' && value !== null && 'getWithMetadata' in value && 'list' in value;
const isNamespace = (value: unknown): value is DurableObjectNamespace =>
  typeof value === 'object' && value !== null && 'idFromName' in value && 'get' in value;
