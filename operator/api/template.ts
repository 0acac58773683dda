/**
 * The Pod template of each role (web, worker, the Jobs), in the spirit of Strimzi's `template` and
 * CloudNativePG's scheduling fields: where the Pods run, who they run as, what they carry. Flat
 * core types are typed here field by field; the deep ones (affinity, label selectors, volumes) are
 * kept as given and validated by the API server against the core schema when the operator applies
 * the Deployment or Job. Extra env may not name a variable the operator sets (CEL, naming it).
 */
import type {
  V1Affinity,
  V1EnvVarSource,
  V1LabelSelector,
  V1SeccompProfile,
  V1Volume,
} from '@kubernetes/client-node';
import { BACKUP_S3_ENV } from '../../server/contract/backup.ts';
import {
  BACKFILL_ENV,
  ENV,
  INGESTION_LOG_ENV,
  INGESTION_LOG_S3_ENV,
  S3_ENV,
} from '../../server/contract/env.ts';
import {
  array,
  boolean,
  enumOf,
  integer,
  map,
  type Node,
  object,
  opaque,
  optional,
  string,
  type TypeOf,
} from './schema.ts';

/** Every variable of the service's contract: the operator renders them from the spec. */
export const OPERATOR_OWNED_ENV: readonly string[] = [
  ...Object.values(ENV),
  ...Object.values(BACKFILL_ENV),
  ...Object.values(S3_ENV).flatMap((names) => Object.values(names)),
  ...Object.values(BACKUP_S3_ENV),
  ...Object.values(INGESTION_LOG_S3_ENV),
  ...Object.values(INGESTION_LOG_ENV),
];

const celList = (names: readonly string[]) => `[${names.map((n) => `'${n}'`).join(', ')}]`;

const labelMap = (what: string) =>
  map(string({ description: `A ${what} value.`, maxLength: 4096 }), {
    description: `Extra ${what}s of the Pods (the operator's app.kubernetes.io labels win on conflict).`,
    maxProperties: 64,
  });

const name = (description: string) => string({ description, maxLength: 253, minLength: 1 });

const seccompProfile = opaque<V1SeccompProfile>({
  description:
    'Seccomp profile (core/v1 SeccompProfile: type RuntimeDefault, Localhost with localhostProfile, or Unconfined).',
});

const podSecurityContext = object(
  {
    runAsNonRoot: optional(boolean({ description: 'Refuse to start a container that would run as root.' })),
    runAsUser: optional(
      integer({ description: 'UID of the container processes.', minimum: 0, format: 'int64' }),
    ),
    runAsGroup: optional(
      integer({ description: 'GID of the container processes.', minimum: 0, format: 'int64' }),
    ),
    fsGroup: optional(integer({ description: 'GID owning mounted volumes.', minimum: 0, format: 'int64' })),
    supplementalGroups: optional(
      array(integer({ description: 'A GID.', minimum: 0, format: 'int64' }), {
        description: 'Extra GIDs of the container processes.',
        maxItems: 32,
      }),
    ),
    seccompProfile: optional(seccompProfile),
  },
  {
    description:
      'Pod securityContext. Each field set here replaces the restricted default (runAsNonRoot, runAsUser and runAsGroup 10001, fsGroup 10001, seccompProfile RuntimeDefault).',
  },
);

const containerSecurityContext = object(
  {
    runAsNonRoot: optional(boolean({ description: 'Refuse to start the container as root.' })),
    runAsUser: optional(
      integer({ description: 'UID of the container process.', minimum: 0, format: 'int64' }),
    ),
    runAsGroup: optional(
      integer({ description: 'GID of the container process.', minimum: 0, format: 'int64' }),
    ),
    readOnlyRootFilesystem: optional(
      boolean({ description: 'Mount the root filesystem read-only (the operator mounts /tmp writable).' }),
    ),
    allowPrivilegeEscalation: optional(boolean({ description: 'Allow setuid binaries to gain privileges.' })),
    capabilities: optional(
      object(
        {
          add: optional(
            array(string({ description: 'A capability, e.g. NET_BIND_SERVICE.', maxLength: 64 }), {
              description: 'Capabilities to add.',
              maxItems: 32,
            }),
          ),
          drop: optional(
            array(string({ description: 'A capability, or ALL.', maxLength: 64 }), {
              description: 'Capabilities to drop.',
              maxItems: 32,
            }),
          ),
        },
        { description: 'Linux capabilities of the container.' },
      ),
    ),
    seccompProfile: optional(seccompProfile),
  },
  {
    description:
      'Container securityContext. Each field set here replaces the restricted default (allowPrivilegeEscalation false, capabilities drop ALL, readOnlyRootFilesystem true, runAsNonRoot true).',
  },
);

const toleration = object(
  {
    key: optional(
      string({ description: 'Taint key; empty with Exists matches every taint.', maxLength: 316 }),
    ),
    operator: optional(enumOf(['Exists', 'Equal'] as const, { description: 'Exists or Equal (default).' })),
    value: optional(string({ description: 'Taint value (with Equal).', maxLength: 63 })),
    effect: optional(
      enumOf(['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const, {
        description: 'Taint effect to tolerate; empty tolerates every effect.',
      }),
    ),
    tolerationSeconds: optional(
      integer({ description: 'How long a NoExecute taint is tolerated.', minimum: 0, format: 'int64' }),
    ),
  },
  { description: 'A core/v1 Toleration.' },
);

const topologySpreadConstraint = object(
  {
    maxSkew: integer({
      description: 'Largest allowed difference of matching Pods between domains.',
      minimum: 1,
      format: 'int32',
    }),
    topologyKey: string({
      description: 'Node label that defines a domain, e.g. topology.kubernetes.io/zone.',
      maxLength: 316,
      minLength: 1,
    }),
    whenUnsatisfiable: enumOf(['DoNotSchedule', 'ScheduleAnyway'] as const, {
      description: 'What the scheduler does when the skew cannot be met.',
    }),
    labelSelector: optional(
      opaque<V1LabelSelector>({
        description: "Pods counted (core LabelSelector); unset means this role's own Pods.",
      }),
    ),
    minDomains: optional(
      integer({ description: 'Minimum number of eligible domains.', minimum: 1, format: 'int32' }),
    ),
    matchLabelKeys: optional(
      array(string({ description: 'A Pod label key.', maxLength: 316 }), {
        description: 'Pod label keys whose values narrow the counted Pods (e.g. pod-template-hash).',
        maxItems: 16,
        listType: 'atomic',
      }),
    ),
  },
  { description: 'A core/v1 TopologySpreadConstraint.' },
);

const envVar = object(
  {
    name: string({ description: 'Variable name.', maxLength: 256, minLength: 1 }),
    value: optional(string({ description: 'Literal value.', maxLength: 32768 })),
    valueFrom: optional(
      opaque<V1EnvVarSource>({
        description: 'Source of the value (core EnvVarSource: secretKeyRef, configMapKeyRef, fieldRef, ...).',
      }),
    ),
  },
  {
    description: 'An extra environment variable; it may not name a variable the operator sets.',
    validations: [
      {
        rule: `!(self.name in ${celList(OPERATOR_OWNED_ENV)})`,
        messageExpression: `'env ' + self.name + ' is set by the operator from the spec and cannot be overridden'`,
        message: 'env names a variable the operator sets from the spec',
        reason: 'FieldValueForbidden',
      },
    ],
  },
);

const sourceRef = (kind: string) =>
  object(
    {
      name: name(`Name of a ${kind} in the namespace of this object.`),
      optional: optional(boolean({ description: `Start even when the ${kind} is missing.` })),
    },
    { description: `Every key of a ${kind} as a variable.` },
  );

const envFromSource = object(
  {
    prefix: optional(string({ description: 'Prefix added to every key.', maxLength: 256 })),
    secretRef: optional(sourceRef('Secret')),
    configMapRef: optional(sourceRef('ConfigMap')),
  },
  {
    description:
      "Variables from every key of a Secret or ConfigMap. The operator's own variables are always set explicitly and win over these.",
    validations: [
      {
        rule: 'has(self.secretRef) != has(self.configMapRef)',
        message: 'envFrom entries name exactly one of secretRef or configMapRef',
      },
    ],
  },
);

const volumeMount = object(
  {
    name: name('Name of a volume of this template.'),
    mountPath: string({ description: 'Path in the container.', maxLength: 4096, minLength: 1 }),
    readOnly: optional(boolean({ description: 'Mount read-only.' })),
    subPath: optional(string({ description: 'Path inside the volume.', maxLength: 4096 })),
  },
  { description: 'A core/v1 VolumeMount.' },
);

export const podTemplate = (role: string) =>
  object(
    {
      metadata: optional(
        object(
          { labels: optional(labelMap('label')), annotations: optional(labelMap('annotation')) },
          { description: `Labels and annotations of the ${role} Pods.` },
        ),
      ),
      nodeSelector: optional(
        map(string({ description: 'A node label value.', maxLength: 63 }), {
          description: 'Node labels a node must have to run the Pods.',
          maxProperties: 32,
        }),
      ),
      tolerations: optional(array(toleration, { description: 'Taints the Pods tolerate.', maxItems: 32 })),
      affinity: optional(
        opaque<V1Affinity>({
          description: 'Node, Pod and anti-Pod affinity (core/v1 Affinity), validated by the API server.',
        }),
      ),
      topologySpreadConstraints: optional(
        array(topologySpreadConstraint, {
          description: 'How the Pods spread over zones or nodes.',
          maxItems: 8,
        }),
      ),
      priorityClassName: optional(
        string({ description: 'PriorityClass of the Pods.', maxLength: 253, minLength: 1 }),
      ),
      serviceAccountName: optional(
        string({
          description: 'ServiceAccount the Pods run as (default: the namespace default).',
          maxLength: 253,
          minLength: 1,
        }),
      ),
      imagePullSecrets: optional(
        array(
          object({ name: name('Name of a docker-registry Secret.') }, { description: 'A Secret name.' }),
          {
            description: 'Secrets to pull the image with.',
            maxItems: 16,
          },
        ),
      ),
      podSecurityContext: optional(podSecurityContext),
      containerSecurityContext: optional(containerSecurityContext),
      env: optional(
        array(envVar, {
          description: `Extra environment of the ${role} container; names must be unique and not the operator's.`,
          maxItems: 64,
          listType: 'map',
          mapKeys: ['name'],
        }),
      ),
      envFrom: optional(
        array(envFromSource, {
          description: `Extra environment sources of the ${role} container.`,
          maxItems: 16,
        }),
      ),
      volumes: optional(
        array(
          // Typed as the core Volume it stands for: every source field is kept as given.
          object(
            { name: name('Volume name, unique in the Pod.') },
            {
              description:
                'A core/v1 Volume (name plus one source: secret, configMap, emptyDir, persistentVolumeClaim, ...), validated by the API server.',
              preserveUnknownFields: true,
              validations: [
                { rule: "self.name != 'tmp'", message: "volume name 'tmp' is the operator's writable /tmp" },
              ],
            },
          ) as Node<V1Volume>,
          { description: 'Extra volumes of the Pods.', maxItems: 16 },
        ),
      ),
      volumeMounts: optional(
        array(volumeMount, {
          description: `Extra mounts of the ${role} container (of volumes listed here).`,
          maxItems: 16,
          validations: [
            {
              rule: "self.all(m, m.mountPath != '/tmp')",
              message: 'volumeMounts may not use /tmp: the operator mounts a writable emptyDir there',
            },
          ],
        }),
      ),
    },
    { description: `Pod template settings of the ${role} Pods.` },
  );

export type PodTemplate = TypeOf<ReturnType<typeof podTemplate>>;
