// JSON schemas for kubeconform, generated locally (these machines cannot fetch
// github.com/yannh/kubernetes-json-schema):
//
// - Kubernetes types: from the OpenAPI v2 document the Kubernetes release checks in
//   (api/openapi-spec/swagger.json of the module k8s.io/kubernetes at the control plane's version,
//   i.e. what that release's kube-apiserver serves at /openapi/v2), fetched through the Go module
//   proxy and converted the way kubeconform's openapi2jsonschema does for its "-standalone-strict"
//   flavour: one file per group/version/kind, named <kind>[-<group prefix>]-<version>.json; every
//   object with properties refuses other properties; int-or-string and Quantity accept both forms.
//   Instead of inlining every $ref (which cannot terminate on recursive types such as
//   JSONSchemaProps), each file carries the definitions it reaches under "definitions".
//   Cached in .cache/tools/kubernetes-json-schema-<version>/.
// - Custom resources: from the openAPIV3Schema of CRD files (cheap; written wherever asked).
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { kubernetesVersion } from '../../cluster/control-plane-binary.ts';
import { withFileLock } from '../../server/platform/datastores/lock-file.ts';
import { moduleDir } from './go-tools.ts';
import { toolsCache } from './paths.ts';

type Schema = { [key: string]: unknown };

/** Bump when the conversion changes, so cached schemas are regenerated. */
const converterRevision = 1;
const definitionPrefix = '#/definitions/';

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The strict, kubeconform-flavoured copy of one schema node: every object with properties refuses
 * others (unless it says otherwise or preserves unknown fields), int-or-string accepts both,
 * descriptions are dropped (they are most of the bytes and kubeconform never shows them), and every
 * definition a $ref names is reported to `onRef`.
 */
function strictSchema(node: Schema, onRef: (name: string) => void): Schema {
  if (node['format'] === 'int-or-string' || node['x-kubernetes-int-or-string'] === true) {
    const { description: _d, format: _f, type: _t, ...rest } = node;
    return { ...rest, anyOf: [{ type: 'integer' }, { type: 'string' }] };
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'description') continue;
    if (key === '$ref' && typeof value === 'string' && value.startsWith(definitionPrefix)) {
      onRef(value.slice(definitionPrefix.length));
      out[key] = value;
    } else if (key === 'properties' && isSchema(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, isSchema(sub) ? strictSchema(sub, onRef) : sub]),
      );
    } else if ((key === 'items' || key === 'additionalProperties' || key === 'not') && isSchema(value)) {
      out[key] = strictSchema(value, onRef);
    } else if ((key === 'allOf' || key === 'anyOf' || key === 'oneOf') && Array.isArray(value)) {
      out[key] = value.map((sub) => (isSchema(sub) ? strictSchema(sub, onRef) : sub));
    } else {
      out[key] = value;
    }
  }
  if (
    isSchema(out['properties']) &&
    !('additionalProperties' in out) &&
    out['x-kubernetes-preserve-unknown-fields'] !== true
  ) {
    out['additionalProperties'] = false;
  }
  return out;
}

/** kubeconform's file name suffix for an apiVersion: "-apps-v1", "-rbac-v1" (rbac.authorization.k8s.io/v1), "-v1" (core). */
export function kindSuffix(group: string, version: string): string {
  return group
    ? `-${group.split('.')[0]!.toLowerCase()}-${version.toLowerCase()}`
    : `-${version.toLowerCase()}`;
}

interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** Converts an OpenAPI v2 document into kubeconform schema files: file name -> schema. */
export function convertOpenApiV2(document: { definitions: Record<string, Schema> }): Map<string, Schema> {
  const definitions = document.definitions;
  const special: Record<string, Schema> = {
    // Serialized as "1", "500m", "1Gi" or a bare number; the apiserver accepts both.
    'io.k8s.apimachinery.pkg.api.resource.Quantity': { anyOf: [{ type: 'string' }, { type: 'number' }] },
    'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { anyOf: [{ type: 'integer' }, { type: 'string' }] },
  };
  const converted = new Map<string, { schema: Schema; refs: Set<string> }>();
  const convert = (name: string) => {
    let entry = converted.get(name);
    if (!entry) {
      const refs = new Set<string>();
      const source = definitions[name];
      if (!source) throw new Error(`OpenAPI document has no definition ${name}`);
      entry = { schema: special[name] ?? strictSchema(source, (ref) => refs.add(ref)), refs };
      converted.set(name, entry);
    }
    return entry;
  };
  const files = new Map<string, Schema>();
  const owners = new Map<string, string>();
  for (const [name, definition] of Object.entries(definitions)) {
    const gvks = (definition['x-kubernetes-group-version-kind'] ?? []) as GroupVersionKind[];
    for (const gvk of gvks) {
      const file = `${gvk.kind.toLowerCase()}${kindSuffix(gvk.group, gvk.version)}.json`;
      const owner = owners.get(file);
      if (owner !== undefined) {
        if (owner !== name) throw new Error(`${file}: both ${owner} and ${name} map to it`);
        continue;
      }
      owners.set(file, name);
      // Every definition reachable from this one, converted, under "definitions".
      const reachable = new Set<string>();
      const pending = [...convert(name).refs];
      while (pending.length > 0) {
        const ref = pending.pop()!;
        if (reachable.has(ref)) continue;
        reachable.add(ref);
        pending.push(...convert(ref).refs);
      }
      const root = convert(name).schema;
      files.set(file, {
        $schema: 'http://json-schema.org/draft-04/schema#',
        ...root,
        type: root['type'] ?? 'object',
        definitions: Object.fromEntries([...reachable].sort().map((ref) => [ref, convert(ref).schema])),
      });
    }
  }
  return files;
}

export interface KubernetesSchemas {
  /** Pass as kubeconform's -schema-location (it appends its standard <version>-standalone-strict/<kind><suffix>.json). */
  location: string;
  /** As kubeconform's -kubernetes-version wants it: "1.36.3". */
  kubernetesVersion: string;
  files: number;
}

/** Kubernetes schemas for kubeconform at the local cluster's version; generated once, then cached. */
export async function ensureKubernetesSchemas(
  log: (line: string) => void = () => {},
): Promise<KubernetesSchemas> {
  const version = kubernetesVersion.replace(/^v/, '');
  const root = join(toolsCache, `kubernetes-json-schema-${kubernetesVersion}`);
  const marker = join(root, 'generated.json');
  const read = async () => {
    try {
      const record = JSON.parse(await readFile(marker, 'utf8')) as { revision: number; files: number };
      return record.revision === converterRevision ? record : undefined;
    } catch {
      return undefined;
    }
  };
  let record = await read();
  if (!record) {
    await withFileLock(`${root}.lock`, async () => {
      record = await read();
      if (record) return;
      const started = performance.now();
      log(
        `generating Kubernetes ${kubernetesVersion} JSON schemas from k8s.io/kubernetes (first run only)...`,
      );
      const source = await moduleDir('k8s.io/kubernetes', kubernetesVersion);
      const swagger = join(source, 'api', 'openapi-spec', 'swagger.json');
      if (!existsSync(swagger)) throw new Error(`${swagger} is missing from the module`);
      const files = convertOpenApiV2(JSON.parse(await readFile(swagger, 'utf8')));
      const staging = `${root}.tmp-${process.pid}`;
      const dir = join(staging, `v${version}-standalone-strict`);
      await rm(staging, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      for (const [file, schema] of files) await writeFile(join(dir, file), JSON.stringify(schema));
      const generated = {
        revision: converterRevision,
        files: files.size,
        source: `k8s.io/kubernetes@${kubernetesVersion} api/openapi-spec/swagger.json`,
        seconds: Math.round((performance.now() - started) / 100) / 10,
        generatedAt: new Date().toISOString(),
      };
      await writeFile(join(staging, 'generated.json'), `${JSON.stringify(generated, null, 2)}\n`);
      await rm(root, { recursive: true, force: true });
      await rename(staging, root);
      record = generated;
      log(`generated ${files.size} schemas in ${generated.seconds}s: ${root}`);
    });
  }
  return { location: root, kubernetesVersion: version, files: record!.files };
}

/**
 * kubeconform schemas for the custom resources defined by CRD YAML texts, written into `dir`.
 * Returns the -schema-location template that finds them.
 */
export async function writeCrdSchemas(crdTexts: string[], dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const text of crdTexts) {
    for (const doc of parseAllDocuments(text)) {
      const crd = doc.toJS() as {
        kind?: string;
        spec?: {
          group: string;
          names: { kind: string };
          versions: { name: string; schema?: { openAPIV3Schema?: Schema } }[];
        };
      } | null;
      if (crd?.kind !== 'CustomResourceDefinition' || !crd.spec) continue;
      for (const version of crd.spec.versions) {
        const schema = version.schema?.openAPIV3Schema;
        if (!schema) continue;
        const file = `${crd.spec.names.kind.toLowerCase()}${kindSuffix(crd.spec.group, version.name)}.json`;
        const strict = strictSchema(schema, () => {
          throw new Error(`${file}: CRD schemas cannot hold $ref`);
        });
        await writeFile(
          join(dir, file),
          JSON.stringify({ $schema: 'http://json-schema.org/draft-04/schema#', ...strict }),
        );
      }
    }
  }
  return join(dir, '{{ .ResourceKind }}{{ .KindSuffix }}.json');
}
