/**
 * A small typed schema builder: one description of the API yields both the OpenAPI v3 schema of
 * the CRD and the TypeScript types (through `TypeOf`), the way controller-gen derives a CRD from
 * Go structs. Only the features the API needs exist; each node keeps its OpenAPI form as plain
 * data so the CRD renderer just walks it. Pure: no I/O.
 */

/** A CEL rule as the API server takes it (`x-kubernetes-validations`). */
export interface CelRule {
  rule: string;
  message: string;
  /** A CEL expression for the message, so it can name the offending value. */
  messageExpression?: string;
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** The subset of OpenAPI v3 (JSONSchemaProps) a structural CRD schema uses here. */
export interface OpenApi {
  type?: 'string' | 'integer' | 'boolean' | 'object' | 'array';
  description?: string;
  format?: string;
  enum?: readonly string[];
  pattern?: string;
  maxLength?: number;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  default?: unknown;
  properties?: Record<string, OpenApi>;
  required?: string[];
  additionalProperties?: OpenApi;
  maxProperties?: number;
  items?: OpenApi;
  anyOf?: OpenApi[];
  'x-kubernetes-int-or-string'?: true;
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: CelRule[];
}

/**
 * One schema node. `T` is the TypeScript type of a value; `O` says whether the field may be
 * absent in its parent object. `_t` exists only at the type level.
 */
export interface Node<T, O extends boolean = false> {
  readonly openapi: OpenApi;
  readonly optional: O;
  /** Child nodes of an object, kept so defaults can be applied recursively. */
  readonly shape?: Shape;
  /** Element node of an array or map. */
  readonly element?: Node<unknown, boolean>;
  readonly _t?: T;
}

// biome-ignore lint/suspicious/noExplicitAny: variance of the phantom type parameter needs any here
export type Shape = Record<string, Node<any, boolean>>;

export type TypeOf<N> = N extends Node<infer T, boolean> ? T : never;

type OptionalKeys<S extends Shape> = {
  [K in keyof S]: S[K] extends Node<unknown, true> ? K : never;
}[keyof S];
type RequiredKeys<S extends Shape> = Exclude<keyof S, OptionalKeys<S>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
export type ObjectOf<S extends Shape> = Simplify<
  { [K in RequiredKeys<S>]: TypeOf<S[K]> } & { [K in OptionalKeys<S>]?: TypeOf<S[K]> }
>;

interface Common {
  description: string;
}

const node = <T>(openapi: OpenApi, extra: Partial<Node<T>> = {}): Node<T> => ({
  openapi,
  optional: false,
  ...extra,
});

/** Marks a field as optional in its parent (absent from `required`, `?` in the type). */
export function optional<T>(n: Node<T, boolean>): Node<T, true> {
  return { ...n, optional: true };
}

/**
 * A field with a default: optional for whoever writes the object (the API server fills it in),
 * so it is optional in the type too; `applyDefaults` gives in-process code the same view.
 */
export function defaulted<T>(n: Node<T, boolean>, value: T): Node<T, true> {
  return { ...n, optional: true, openapi: { ...n.openapi, default: value } };
}

export function string(
  o: Common & { maxLength: number; pattern?: string; minLength?: number; format?: string },
): Node<string> {
  return node({ type: 'string', ...o });
}

export function enumOf<const V extends readonly string[]>(values: V, o: Common): Node<V[number]> {
  return node({ type: 'string', enum: values, description: o.description });
}

export function integer(
  o: Common & { minimum?: number; maximum?: number; format?: 'int32' | 'int64' },
): Node<number> {
  return node({ type: 'integer', ...o });
}

export function boolean(o: Common): Node<boolean> {
  return node({ type: 'boolean', ...o });
}

export function object<S extends Shape>(
  shape: S,
  o: Common & { validations?: CelRule[]; preserveUnknownFields?: boolean },
): Node<ObjectOf<S>> {
  const properties: Record<string, OpenApi> = {};
  const required: string[] = [];
  for (const [k, v] of Object.entries(shape)) {
    properties[k] = v.openapi;
    if (!v.optional) required.push(k);
  }
  return node(
    {
      type: 'object',
      description: o.description,
      properties,
      ...(required.length > 0 ? { required } : {}),
      ...(o.validations ? { 'x-kubernetes-validations': o.validations } : {}),
      ...(o.preserveUnknownFields ? { 'x-kubernetes-preserve-unknown-fields': true as const } : {}),
    },
    { shape },
  );
}

export function array<T>(
  element: Node<T, boolean>,
  o: Common & {
    maxItems: number;
    listType?: 'atomic' | 'set' | 'map';
    mapKeys?: string[];
    validations?: CelRule[];
  },
): Node<T[]> {
  return node(
    {
      type: 'array',
      description: o.description,
      items: element.openapi,
      maxItems: o.maxItems,
      ...(o.validations ? { 'x-kubernetes-validations': o.validations } : {}),
      ...(o.listType ? { 'x-kubernetes-list-type': o.listType } : {}),
      ...(o.mapKeys ? { 'x-kubernetes-list-map-keys': o.mapKeys } : {}),
    },
    { element },
  );
}

export function map<T>(
  element: Node<T, boolean>,
  o: Common & { maxProperties: number },
): Node<Record<string, T>> {
  return node(
    {
      type: 'object',
      description: o.description,
      additionalProperties: element.openapi,
      maxProperties: o.maxProperties,
    },
    { element },
  );
}

/** Kubernetes quantities ("500m", "1Gi", 2): an int-or-string as in core types. */
export function quantity(o: Common): Node<string | number> {
  return node({
    description: o.description,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    'x-kubernetes-int-or-string': true,
    pattern:
      '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
  });
}

/**
 * An object whose fields the API server keeps as given (`x-kubernetes-preserve-unknown-fields`):
 * for deep core types (affinity, volumes) that the operator copies into Pod specs unchanged, where
 * the API server validates them against the core schema when the Deployment is applied.
 */
export function opaque<T>(o: Common & { validations?: CelRule[] }): Node<T> {
  return node({
    type: 'object',
    description: o.description,
    'x-kubernetes-preserve-unknown-fields': true,
    ...(o.validations ? { 'x-kubernetes-validations': o.validations } : {}),
  });
}

/** An integer or a percentage ("25%"), as a PodDisruptionBudget's minAvailable takes. */
export function intOrPercent(o: Common): Node<number | string> {
  return node({
    description: o.description,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    'x-kubernetes-int-or-string': true,
    pattern: '^(100|[1-9]?[0-9])%$',
  });
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Fills in defaults the way the API server does for a structural schema: a default applies to an
 * absent field, and nested defaults apply inside objects that are present (or defaulted).
 * In-process code (planner, tests) thereby sees what a real cluster would have stored.
 */
export function applyDefaults<T>(n: Node<T, boolean>, value: T): T {
  return fill(n, value) as T;
}

function fill(n: Node<unknown, boolean>, value: unknown): unknown {
  let v = value === undefined ? structuredClone(n.openapi.default) : value;
  if (n.shape && isPlainObject(v)) {
    const out: Record<string, unknown> = { ...v };
    for (const [k, child] of Object.entries(n.shape)) {
      const filled = fill(child, out[k]);
      if (filled !== undefined) out[k] = filled;
    }
    v = out;
  } else if (n.element && Array.isArray(v)) {
    v = v.map((e) => fill(n.element!, e));
  }
  return v;
}
