/**
 * The relational (PostgreSQL) schema as numbered migrations with up and down steps. Versions 1-4
 * are release 3's; 5-7 are version 4's (the backfill chain rows, the drop of the relational
 * tracing tables, producer activity); 8 onwards are on both releases (`bothReleases`). Each migration runs in one transaction.
 */
export interface RelationalMigration {
  version: number;
  name: string;
  up: string;
  down: string;
  /**
   * Part of release 3's schema too: relational resources that exist on both releases (the spec:
   * the relational schema needs no change on a rollback). Release 3 applies versions 1-4 and these.
   */
  bothReleases?: true;
}

/**
 * The columns most tables open or close with: the owning project, and when a row was made and
 * changed. Interpolated as text, so each migration's SQL is the same as when it was written out.
 */
const PROJECT_ID = 'project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE';
const TIMESTAMPS =
  'created_at TIMESTAMPTZ NOT NULL DEFAULT now(), updated_at TIMESTAMPTZ NOT NULL DEFAULT now()';

const LEGACY_TRACING_TABLES = `
CREATE TABLE IF NOT EXISTS traces (
  id TEXT NOT NULL, ${PROJECT_ID},
  timestamp TIMESTAMPTZ NOT NULL DEFAULT now(), name TEXT, user_id TEXT, metadata JSONB,
  release TEXT, version TEXT, input JSONB, output JSONB, session_id TEXT, public BOOLEAN NOT NULL DEFAULT false,
  bookmarked BOOLEAN NOT NULL DEFAULT false, tags TEXT[] NOT NULL DEFAULT '{}',
  ${TIMESTAMPS},
  PRIMARY KEY (id, project_id)
);
CREATE TABLE IF NOT EXISTS observations (
  id TEXT NOT NULL, ${PROJECT_ID},
  trace_id TEXT, type TEXT NOT NULL, name TEXT, start_time TIMESTAMPTZ NOT NULL DEFAULT now(),
  end_time TIMESTAMPTZ, parent_observation_id TEXT, level TEXT NOT NULL DEFAULT 'DEFAULT',
  status_message TEXT, version TEXT, model TEXT, input JSONB, output JSONB, metadata JSONB,
  ${TIMESTAMPS},
  PRIMARY KEY (id, project_id)
);
CREATE TABLE IF NOT EXISTS scores (
  id TEXT NOT NULL, ${PROJECT_ID},
  timestamp TIMESTAMPTZ NOT NULL DEFAULT now(), name TEXT NOT NULL, value DOUBLE PRECISION,
  string_value TEXT, source TEXT NOT NULL, comment TEXT, trace_id TEXT, observation_id TEXT,
  data_type TEXT NOT NULL DEFAULT 'NUMERIC',
  ${TIMESTAMPS},
  PRIMARY KEY (id, project_id)
);
CREATE TABLE IF NOT EXISTS dataset_run_items (
  id TEXT NOT NULL, ${PROJECT_ID},
  dataset_run_id TEXT NOT NULL REFERENCES dataset_runs(id) ON DELETE CASCADE,
  dataset_item_id TEXT NOT NULL, trace_id TEXT NOT NULL, observation_id TEXT,
  ${TIMESTAMPS},
  PRIMARY KEY (id, project_id)
);`;

export const RELATIONAL_MIGRATIONS: RelationalMigration[] = [
  {
    version: 1,
    name: 'projects_and_api_keys',
    up: `
CREATE TABLE projects (
  id TEXT PRIMARY KEY, name TEXT NOT NULL,
  ${TIMESTAMPS}
);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  public_key TEXT NOT NULL UNIQUE,
  -- SHA-256 of the secret key: secrets are 256-bit random values, so a fast hash is safe to store
  -- and to check on every request; the secret itself is shown once and never stored.
  hashed_secret_key TEXT NOT NULL UNIQUE,
  display_secret_key TEXT NOT NULL,
  note TEXT, created_at TIMESTAMPTZ NOT NULL DEFAULT now(), last_used_at TIMESTAMPTZ
);
CREATE INDEX api_keys_project_id_idx ON api_keys(project_id);`,
    down: 'DROP TABLE IF EXISTS api_keys; DROP TABLE IF EXISTS projects;',
  },
  {
    version: 2,
    name: 'background_migrations',
    up: `
CREATE TABLE background_migrations (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, script TEXT NOT NULL, args JSONB NOT NULL DEFAULT '{}',
  state JSONB NOT NULL DEFAULT '{}', finished_at TIMESTAMPTZ, failed_at TIMESTAMPTZ, failed_reason TEXT,
  worker_id TEXT, locked_at TIMESTAMPTZ
);`,
    down: 'DROP TABLE IF EXISTS background_migrations;',
  },
  {
    version: 3,
    name: 'datasets',
    up: `
CREATE TABLE datasets (
  id TEXT NOT NULL, ${PROJECT_ID},
  name TEXT NOT NULL, description TEXT, metadata JSONB, input_schema JSONB, expected_output_schema JSONB,
  ${TIMESTAMPS},
  PRIMARY KEY (id, project_id), UNIQUE (project_id, name)
);
CREATE TABLE dataset_items (
  id TEXT NOT NULL, ${PROJECT_ID},
  dataset_id TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'ACTIVE', input JSONB, expected_output JSONB,
  metadata JSONB, source_trace_id TEXT, source_observation_id TEXT,
  ${TIMESTAMPS},
  PRIMARY KEY (id, project_id), FOREIGN KEY (dataset_id, project_id) REFERENCES datasets(id, project_id) ON DELETE CASCADE
);
CREATE INDEX dataset_items_dataset_idx ON dataset_items(project_id, dataset_id, created_at);
CREATE TABLE dataset_runs (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  dataset_id TEXT NOT NULL, name TEXT NOT NULL, description TEXT, metadata JSONB,
  ${TIMESTAMPS},
  UNIQUE (dataset_id, project_id, name)
);`,
    down: 'DROP TABLE IF EXISTS dataset_runs; DROP TABLE IF EXISTS dataset_items; DROP TABLE IF EXISTS datasets;',
  },
  {
    version: 4,
    name: 'legacy_tracing_tables',
    up: LEGACY_TRACING_TABLES,
    down: 'DROP TABLE IF EXISTS dataset_run_items, scores, observations, traces;',
  },
  {
    version: 5,
    name: 'v4_backfill_chain',
    // Frozen: the rows of the five steps as applied (ids and names follow the reference); a later
    // step gets its row from a new migration, never from an edit here.
    up: `INSERT INTO background_migrations (id, name, script, args) VALUES ('8e1f4a2b-5c63-4d8e-9a47-1b2f3c4d5e6f', '20260701_v4_step_1_create_root_spans_from_traces', 'createRootSpansFromTraces', '{"envGate":"SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL"}') ON CONFLICT (name) DO NOTHING;
INSERT INTO background_migrations (id, name, script, args) VALUES ('9c2d5a4f-7b8e-4f6a-a91c-3e5d7f8a2b1c', '20260701_v4_step_2_rewrite_observations_to_pid_tid_sorting', 'rewriteObservationsToPidTidSorting', '{"envGate":"SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL"}') ON CONFLICT (name) DO NOTHING;
INSERT INTO background_migrations (id, name, script, args) VALUES ('7a3f8d6e-2c91-4b5e-8d72-f4a5b6c7d8e9', '20260701_v4_step_3_backfill_events_full_from_observations', 'backfillEventsFullFromObservations', '{"envGate":"SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL"}') ON CONFLICT (name) DO NOTHING;
INSERT INTO background_migrations (id, name, script, args) VALUES ('9d4f8a12-7b35-4e6c-9f48-a2b3c4d5e6f7', '20260701_v4_step_4_backfill_events_full_from_dataset_run_items', 'backfillEventsFullFromDatasetRunItems', '{"envGate":"SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL"}') ON CONFLICT (name) DO NOTHING;
INSERT INTO background_migrations (id, name, script, args) VALUES ('b3f1c5d8-9e47-4a26-8b3f-5c6d7e8f9a01', '20260701_v4_step_5_drop_pid_tid_sorting_tables', 'dropPidTidSortingTables', '{"envGate":"SERVICE_BACKGROUND_MIGRATION_V4_DROP_PID_TID_SORTING_TABLES"}') ON CONFLICT (name) DO NOTHING;`,
    down: `DELETE FROM background_migrations WHERE name IN ('20260701_v4_step_1_create_root_spans_from_traces', '20260701_v4_step_2_rewrite_observations_to_pid_tid_sorting', '20260701_v4_step_3_backfill_events_full_from_observations', '20260701_v4_step_4_backfill_events_full_from_dataset_run_items', '20260701_v4_step_5_drop_pid_tid_sorting_tables');`,
  },
  {
    version: 6,
    name: 'v4_drop_legacy_tracing_tables',
    up: 'DROP TABLE IF EXISTS dataset_run_items, scores, observations, traces;',
    down: LEGACY_TRACING_TABLES,
  },
  {
    version: 7,
    name: 'v4_producer_activity',
    up: `
CREATE TABLE producer_activity (
  project_id TEXT NOT NULL, public_key TEXT NOT NULL, sdk_name TEXT NOT NULL, sdk_version TEXT NOT NULL,
  path TEXT NOT NULL, first_seen TIMESTAMPTZ NOT NULL, last_seen TIMESTAMPTZ NOT NULL, requests BIGINT NOT NULL,
  PRIMARY KEY (public_key, sdk_name, sdk_version, path)
);
CREATE INDEX producer_activity_last_seen_idx ON producer_activity(last_seen);`,
    down: 'DROP TABLE IF EXISTS producer_activity;',
  },
  {
    version: 8,
    name: 'organizations',
    bothReleases: true,
    // Every project belongs to an organization (the SDKs' project model requires one); projects
    // created before this version, or without naming one, belong to the default organization.
    up: `
CREATE TABLE IF NOT EXISTS organizations (
  id TEXT PRIMARY KEY, name TEXT NOT NULL,
  ${TIMESTAMPS}
);
INSERT INTO organizations (id, name) VALUES ('default', 'Default organization') ON CONFLICT (id) DO NOTHING;
ALTER TABLE projects ADD COLUMN IF NOT EXISTS org_id TEXT NOT NULL DEFAULT 'default' REFERENCES organizations(id);`,
    down: 'ALTER TABLE projects DROP COLUMN IF EXISTS org_id; DROP TABLE IF EXISTS organizations;',
  },
  {
    version: 9,
    name: 'prompts',
    bothReleases: true,
    up: `
CREATE TABLE IF NOT EXISTS prompts (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  name TEXT NOT NULL, version INTEGER NOT NULL, type TEXT NOT NULL, prompt JSONB NOT NULL,
  config JSONB NOT NULL DEFAULT '{}', labels TEXT[] NOT NULL DEFAULT '{}', tags TEXT[] NOT NULL DEFAULT '{}',
  commit_message TEXT, created_by TEXT NOT NULL DEFAULT 'API',
  ${TIMESTAMPS},
  UNIQUE (project_id, name, version)
);
CREATE INDEX IF NOT EXISTS prompts_project_updated_idx ON prompts(project_id, updated_at);`,
    down: 'DROP TABLE IF EXISTS prompts;',
  },
  {
    version: 10,
    name: 'score_configs',
    bothReleases: true,
    up: `
CREATE TABLE IF NOT EXISTS score_configs (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  name TEXT NOT NULL, data_type TEXT NOT NULL, is_archived BOOLEAN NOT NULL DEFAULT false,
  min_value DOUBLE PRECISION, max_value DOUBLE PRECISION, categories JSONB, description TEXT,
  ${TIMESTAMPS}
);
CREATE INDEX IF NOT EXISTS score_configs_project_idx ON score_configs(project_id, created_at);`,
    down: 'DROP TABLE IF EXISTS score_configs;',
  },
  {
    version: 11,
    name: 'comments',
    bothReleases: true,
    up: `
CREATE TABLE IF NOT EXISTS comments (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  object_type TEXT NOT NULL, object_id TEXT NOT NULL, content TEXT NOT NULL, author_user_id TEXT,
  ${TIMESTAMPS}
);
CREATE INDEX IF NOT EXISTS comments_object_idx ON comments(project_id, object_type, object_id, created_at);`,
    down: 'DROP TABLE IF EXISTS comments;',
  },
  {
    version: 12,
    name: 'users_memberships_sessions',
    bothReleases: true,
    // The web UI's people: a password hash (PHC string, memory-hard), a role per organization or
    // per project, and server-side sessions keyed by the SHA-256 of the cookie's token.
    up: `
CREATE TABLE IF NOT EXISTS users (
  id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT, password_hash TEXT NOT NULL,
  ${TIMESTAMPS}
);
CREATE TABLE IF NOT EXISTS organization_memberships (
  org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('owner', 'member', 'viewer')),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (org_id, user_id)
);
CREATE TABLE IF NOT EXISTS project_memberships (
  ${PROJECT_ID},
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('owner', 'member', 'viewer')),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (project_id, user_id)
);
CREATE INDEX IF NOT EXISTS project_memberships_user_idx ON project_memberships(user_id);
CREATE INDEX IF NOT EXISTS organization_memberships_user_idx ON organization_memberships(user_id);
CREATE TABLE IF NOT EXISTS user_sessions (
  token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  csrf_token TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now(), expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS user_sessions_user_idx ON user_sessions(user_id);`,
    down: 'DROP TABLE IF EXISTS user_sessions, project_memberships, organization_memberships, users;',
  },
  {
    version: 13,
    name: 'media',
    bothReleases: true,
    // One row per content per project (the id derives from the SHA-256, so equal bytes share a row);
    // the links say which trace or observation field references it.
    up: `
CREATE TABLE IF NOT EXISTS media (
  id TEXT NOT NULL, ${PROJECT_ID},
  sha_256_hash TEXT NOT NULL, bucket_name TEXT NOT NULL, bucket_path TEXT NOT NULL,
  content_type TEXT NOT NULL, content_length BIGINT NOT NULL,
  uploaded_at TIMESTAMPTZ, upload_http_status INTEGER, upload_http_error TEXT, upload_time_ms INTEGER,
  ${TIMESTAMPS},
  PRIMARY KEY (project_id, id), UNIQUE (project_id, sha_256_hash)
);
CREATE TABLE IF NOT EXISTS trace_media (
  project_id TEXT NOT NULL, trace_id TEXT NOT NULL, media_id TEXT NOT NULL, field TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, trace_id, media_id, field),
  FOREIGN KEY (project_id, media_id) REFERENCES media(project_id, id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS observation_media (
  project_id TEXT NOT NULL, trace_id TEXT NOT NULL, observation_id TEXT NOT NULL, media_id TEXT NOT NULL,
  field TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, trace_id, observation_id, media_id, field),
  FOREIGN KEY (project_id, media_id) REFERENCES media(project_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS trace_media_media_idx ON trace_media(project_id, media_id);
CREATE INDEX IF NOT EXISTS observation_media_media_idx ON observation_media(project_id, media_id);`,
    down: 'DROP TABLE IF EXISTS observation_media, trace_media, media;',
  },
  {
    version: 14,
    name: 'scheduled_exports',
    bothReleases: true,
    // `checkpoint` is the end of the last window written: the next window starts there.
    up: `
CREATE TABLE IF NOT EXISTS export_configs (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  source TEXT NOT NULL, format TEXT NOT NULL, frequency TEXT NOT NULL, prefix TEXT NOT NULL DEFAULT '',
  checkpoint TIMESTAMPTZ NOT NULL, windows_written INTEGER NOT NULL DEFAULT 0, rows_written BIGINT NOT NULL DEFAULT 0,
  last_run_at TIMESTAMPTZ, last_skip_reason TEXT,
  ${TIMESTAMPS}
);
CREATE INDEX IF NOT EXISTS export_configs_project_idx ON export_configs(project_id, created_at);`,
    down: 'DROP TABLE IF EXISTS export_configs;',
  },
  {
    version: 15,
    name: 'users_v4_preview',
    bothReleases: true,
    // The per-user toggle of the version 4 read path (dual with the preview opt-in); off until the
    // user turns it on, as the reference's preview.
    up: 'ALTER TABLE users ADD COLUMN IF NOT EXISTS v4_preview BOOLEAN NOT NULL DEFAULT false;',
    down: 'ALTER TABLE users DROP COLUMN IF EXISTS v4_preview;',
  },
  {
    version: 16,
    name: 'model_definitions',
    bothReleases: true,
    // Built-in definitions have no project; a project's own override them. Tiers (conditions and
    // prices per usage type) live in the row: they are read and written with their model only.
    up: `
CREATE TABLE IF NOT EXISTS models (
  id TEXT PRIMARY KEY, project_id TEXT REFERENCES projects(id) ON DELETE CASCADE,
  model_name TEXT NOT NULL, match_pattern TEXT NOT NULL, start_date TIMESTAMPTZ, unit TEXT,
  tokenizer_id TEXT, tokenizer_config JSONB, pricing_tiers JSONB NOT NULL,
  source TEXT, source_date DATE,
  ${TIMESTAMPS}
);
CREATE UNIQUE INDEX IF NOT EXISTS models_project_name_idx ON models(project_id, model_name)
  WHERE project_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS models_project_idx ON models(project_id);`,
    down: 'DROP TABLE IF EXISTS models;',
  },
  {
    version: 17,
    name: 'llm_connections',
    bothReleases: true,
    // One connection per provider name per project. `secret_key` and `extra_headers` hold AES-256-GCM
    // ciphertext (server/features/llm-connections/secrets.ts); only the masked key and the header names are readable.
    up: `
CREATE TABLE IF NOT EXISTS llm_connections (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  provider TEXT NOT NULL, adapter TEXT NOT NULL, secret_key TEXT NOT NULL, display_secret_key TEXT NOT NULL,
  base_url TEXT, custom_models TEXT[] NOT NULL DEFAULT '{}', with_default_models BOOLEAN NOT NULL DEFAULT true,
  extra_headers TEXT, extra_header_keys TEXT[] NOT NULL DEFAULT '{}', config JSONB,
  ${TIMESTAMPS},
  UNIQUE (project_id, provider)
);`,
    down: 'DROP TABLE IF EXISTS llm_connections;',
  },
  {
    version: 18,
    name: 'evaluation',
    bothReleases: true,
    // Evaluators are versioned per name (`id` names the family); a rule runs the latest version of
    // each evaluator assigned to it. Executions are the durable queue and log of judgments: one row
    // per rule, evaluator and observation, claimed with SKIP LOCKED, retried at `next_attempt_at`.
    up: `
CREATE TABLE IF NOT EXISTS evaluators (
  id TEXT NOT NULL, ${PROJECT_ID},
  name TEXT NOT NULL, version INTEGER NOT NULL, prompt TEXT NOT NULL, output_definition JSONB NOT NULL,
  model_config JSONB, variables TEXT[] NOT NULL, mapping JSONB,
  ${TIMESTAMPS},
  PRIMARY KEY (project_id, name, version)
);
CREATE INDEX IF NOT EXISTS evaluators_id_idx ON evaluators(project_id, id);
CREATE TABLE IF NOT EXISTS evaluation_rules (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  name TEXT NOT NULL, target TEXT NOT NULL, enabled BOOLEAN NOT NULL, sampling DOUBLE PRECISION NOT NULL,
  filter JSONB NOT NULL DEFAULT '[]', paused_reason TEXT, paused_message TEXT,
  scan_cursor TIMESTAMPTZ NOT NULL DEFAULT now(),
  ${TIMESTAMPS},
  UNIQUE (project_id, name)
);
CREATE TABLE IF NOT EXISTS evaluation_rule_evaluators (
  rule_id TEXT NOT NULL REFERENCES evaluation_rules(id) ON DELETE CASCADE, position INTEGER NOT NULL,
  evaluator_id TEXT NOT NULL, mapping JSONB, PRIMARY KEY (rule_id, position)
);
CREATE TABLE IF NOT EXISTS evaluation_executions (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  rule_id TEXT NOT NULL, evaluator_id TEXT NOT NULL, evaluator_version INTEGER,
  trace_id TEXT NOT NULL, observation_id TEXT NOT NULL, observation_start_time TIMESTAMPTZ NOT NULL,
  status TEXT NOT NULL DEFAULT 'PENDING', attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TIMESTAMPTZ NOT NULL DEFAULT now(), locked_by TEXT, locked_until TIMESTAMPTZ,
  error TEXT, score_id TEXT, provider TEXT,
  ${TIMESTAMPS},
  UNIQUE (rule_id, evaluator_id, observation_id)
);
CREATE INDEX IF NOT EXISTS evaluation_executions_due_idx ON evaluation_executions(status, next_attempt_at);`,
    down: 'DROP TABLE IF EXISTS evaluation_executions, evaluation_rule_evaluators, evaluation_rules, evaluators;',
  },
  {
    version: 19,
    name: 'audit_logs',
    bothReleases: true,
    // Who (the API key's id) deleted what and when; kept after the key or its project goes, so
    // no foreign keys.
    up: `
CREATE TABLE IF NOT EXISTS audit_logs (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL, api_key_id TEXT,
  resource_type TEXT NOT NULL, resource_id TEXT NOT NULL, action TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS audit_logs_project_idx ON audit_logs(project_id, created_at);`,
    down: 'DROP TABLE IF EXISTS audit_logs;',
  },
  {
    version: 20,
    name: 'alerts',
    bothReleases: true,
    // Rules carry their state (the worker claims due rules by `next_evaluation_at` with SKIP
    // LOCKED, so one replica evaluates each); channels keep their secret (the webhook's signing
    // secret, Slack's webhook URL) as AES-256-GCM ciphertext under ENCRYPTION_KEY. Notifications
    // are the durable delivery queue; each try is one attempt row.
    up: `
CREATE TABLE IF NOT EXISTS alert_channels (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  name TEXT NOT NULL, type TEXT NOT NULL, url TEXT, secret TEXT NOT NULL, display_secret TEXT NOT NULL,
  ${TIMESTAMPS},
  UNIQUE (project_id, name)
);
CREATE TABLE IF NOT EXISTS alert_rules (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  name TEXT NOT NULL, description TEXT, view TEXT NOT NULL, measure TEXT NOT NULL, aggregation TEXT NOT NULL,
  filters JSONB NOT NULL DEFAULT '[]', operator TEXT NOT NULL,
  warning_threshold DOUBLE PRECISION, alert_threshold DOUBLE PRECISION NOT NULL,
  window_seconds INTEGER NOT NULL, frequency_seconds INTEGER NOT NULL, no_data_mode TEXT NOT NULL,
  renotify_seconds INTEGER, paused BOOLEAN NOT NULL DEFAULT false,
  state TEXT, state_since TIMESTAMPTZ, last_value DOUBLE PRECISION, last_evaluated_at TIMESTAMPTZ,
  last_notified_at TIMESTAMPTZ, next_evaluation_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  ${TIMESTAMPS},
  UNIQUE (project_id, name)
);
CREATE INDEX IF NOT EXISTS alert_rules_due_idx ON alert_rules(next_evaluation_at) WHERE NOT paused;
CREATE TABLE IF NOT EXISTS alert_rule_channels (
  rule_id TEXT NOT NULL REFERENCES alert_rules(id) ON DELETE CASCADE,
  channel_id TEXT NOT NULL REFERENCES alert_channels(id) ON DELETE CASCADE,
  PRIMARY KEY (rule_id, channel_id)
);
CREATE TABLE IF NOT EXISTS alert_state_history (
  id TEXT PRIMARY KEY, rule_id TEXT NOT NULL REFERENCES alert_rules(id) ON DELETE CASCADE,
  from_state TEXT, to_state TEXT NOT NULL, value DOUBLE PRECISION, evaluated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS alert_state_history_rule_idx ON alert_state_history(rule_id, evaluated_at);
CREATE TABLE IF NOT EXISTS alert_notifications (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  rule_id TEXT REFERENCES alert_rules(id) ON DELETE CASCADE,
  channel_id TEXT NOT NULL REFERENCES alert_channels(id) ON DELETE CASCADE,
  kind TEXT NOT NULL, event JSONB NOT NULL, status TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  locked_until TIMESTAMPTZ, created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS alert_notifications_due_idx ON alert_notifications(status, next_attempt_at);
CREATE INDEX IF NOT EXISTS alert_notifications_rule_idx ON alert_notifications(rule_id, created_at);
CREATE TABLE IF NOT EXISTS alert_notification_attempts (
  notification_id TEXT NOT NULL REFERENCES alert_notifications(id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL, status TEXT NOT NULL, response_code INTEGER, error TEXT,
  next_retry_at TIMESTAMPTZ, attempted_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (notification_id, attempt)
);`,
    down: 'DROP TABLE IF EXISTS alert_notification_attempts, alert_notifications, alert_state_history, alert_rule_channels, alert_rules, alert_channels;',
  },
  {
    version: 21,
    name: 'dashboards',
    bothReleases: true,
    // Widgets are standalone chart definitions (a Metrics v2 query and how to draw it) placed on
    // any number of dashboards; a placement names either a project widget or a built-in preset.
    // A placed widget cannot be deleted (RESTRICT), as the reference answers 409.
    up: `
CREATE TABLE IF NOT EXISTS dashboards (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  name TEXT NOT NULL, description TEXT NOT NULL DEFAULT '', filters JSONB NOT NULL DEFAULT '[]',
  default_time_range TEXT NOT NULL DEFAULT '24h',
  ${TIMESTAMPS}
);
CREATE INDEX IF NOT EXISTS dashboards_project_idx ON dashboards(project_id, updated_at);
CREATE TABLE IF NOT EXISTS dashboard_widgets (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  name TEXT NOT NULL, description TEXT NOT NULL DEFAULT '', view TEXT NOT NULL,
  dimensions JSONB NOT NULL, metrics JSONB NOT NULL, filters JSONB NOT NULL,
  chart_type TEXT NOT NULL, chart_config JSONB NOT NULL,
  ${TIMESTAMPS}
);
CREATE INDEX IF NOT EXISTS dashboard_widgets_project_idx ON dashboard_widgets(project_id, updated_at);
CREATE TABLE IF NOT EXISTS dashboard_placements (
  dashboard_id TEXT NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE, id TEXT NOT NULL,
  widget_id TEXT REFERENCES dashboard_widgets(id) ON DELETE RESTRICT, preset_id TEXT,
  x INTEGER NOT NULL, y INTEGER NOT NULL, x_size INTEGER NOT NULL, y_size INTEGER NOT NULL,
  PRIMARY KEY (dashboard_id, id),
  CHECK ((widget_id IS NULL) <> (preset_id IS NULL))
);
CREATE INDEX IF NOT EXISTS dashboard_placements_widget_idx ON dashboard_placements(widget_id);`,
    down: 'DROP TABLE IF EXISTS dashboard_placements, dashboard_widgets, dashboards;',
  },
  {
    version: 22,
    name: 'dataset_item_events',
    bothReleases: true,
    // Every state a dataset item had, so the SDKs can read a dataset as of a time (`version`).
    // A trigger appends them, so no write path (API, CLI, a dataset's cascade) can skip one.
    // Items older than this migration start with their current state at their creation time.
    up: `
CREATE TABLE IF NOT EXISTS dataset_item_events (
  seq BIGSERIAL PRIMARY KEY, project_id TEXT NOT NULL, dataset_id TEXT NOT NULL, item_id TEXT NOT NULL,
  status TEXT, input JSONB, expected_output JSONB, metadata JSONB,
  source_trace_id TEXT, source_observation_id TEXT, deleted BOOLEAN NOT NULL DEFAULT false,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS dataset_item_events_item_idx
  ON dataset_item_events(project_id, item_id, created_at DESC, seq DESC);
CREATE OR REPLACE FUNCTION record_dataset_item_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO dataset_item_events (project_id, dataset_id, item_id, deleted)
    VALUES (OLD.project_id, OLD.dataset_id, OLD.id, true);
    RETURN OLD;
  END IF;
  INSERT INTO dataset_item_events (project_id, dataset_id, item_id, status, input, expected_output, metadata,
    source_trace_id, source_observation_id)
  VALUES (NEW.project_id, NEW.dataset_id, NEW.id, NEW.status, NEW.input, NEW.expected_output, NEW.metadata,
    NEW.source_trace_id, NEW.source_observation_id);
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS dataset_item_events ON dataset_items;
CREATE TRIGGER dataset_item_events AFTER INSERT OR UPDATE OR DELETE ON dataset_items
  FOR EACH ROW EXECUTE FUNCTION record_dataset_item_event();
INSERT INTO dataset_item_events (project_id, dataset_id, item_id, status, input, expected_output, metadata,
  source_trace_id, source_observation_id, created_at)
SELECT project_id, dataset_id, id, status, input, expected_output, metadata, source_trace_id, source_observation_id,
  created_at
FROM dataset_items i
WHERE NOT EXISTS (SELECT 1 FROM dataset_item_events e WHERE e.project_id = i.project_id AND e.item_id = i.id);`,
    down: `
DROP TRIGGER IF EXISTS dataset_item_events ON dataset_items;
DROP FUNCTION IF EXISTS record_dataset_item_event();
DROP TABLE IF EXISTS dataset_item_events;`,
  },
  {
    version: 23,
    name: 'annotation_queues',
    bothReleases: true,
    // Human review: queues scoring with a set of score configs, their items (a trace, observation
    // or session of the queue's project, pending or completed, by whom) and the project members
    // assigned to each queue. Items and assignments go with their queue.
    up: `
CREATE TABLE IF NOT EXISTS annotation_queues (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  name TEXT NOT NULL, description TEXT, score_config_ids TEXT[] NOT NULL,
  ${TIMESTAMPS},
  UNIQUE (project_id, name)
);
CREATE INDEX IF NOT EXISTS annotation_queues_project_idx ON annotation_queues(project_id, created_at DESC);
CREATE TABLE IF NOT EXISTS annotation_queue_items (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL,
  queue_id TEXT NOT NULL REFERENCES annotation_queues(id) ON DELETE CASCADE,
  object_id TEXT NOT NULL, object_type TEXT NOT NULL CHECK (object_type IN ('TRACE', 'OBSERVATION', 'SESSION')),
  status TEXT NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'COMPLETED')),
  completed_at TIMESTAMPTZ, annotator_user_id TEXT REFERENCES users(id) ON DELETE SET NULL,
  ${TIMESTAMPS}
);
CREATE INDEX IF NOT EXISTS annotation_queue_items_queue_idx
  ON annotation_queue_items(project_id, queue_id, created_at DESC);
CREATE TABLE IF NOT EXISTS annotation_queue_assignments (
  project_id TEXT NOT NULL, queue_id TEXT NOT NULL REFERENCES annotation_queues(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (queue_id, user_id)
);`,
    down: 'DROP TABLE IF EXISTS annotation_queue_assignments, annotation_queue_items, annotation_queues;',
  },
  {
    version: 24,
    name: 'cost_recomputations',
    bothReleases: true,
    // Where `observatory recompute-costs` stands for a range (and project): the last row done, so a
    // killed run resumes there. One row per range; a finished one starts over when asked again.
    up: `
CREATE TABLE IF NOT EXISTS cost_recomputations (
  id TEXT PRIMARY KEY, project_id TEXT, from_time TIMESTAMPTZ NOT NULL, to_time TIMESTAMPTZ NOT NULL,
  cursor JSONB, examined BIGINT NOT NULL DEFAULT 0, updated BIGINT NOT NULL DEFAULT 0,
  started_at TIMESTAMPTZ NOT NULL DEFAULT now(), updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  finished_at TIMESTAMPTZ
);`,
    down: 'DROP TABLE IF EXISTS cost_recomputations;',
  },
  {
    version: 25,
    name: 'project_retention',
    bothReleases: true,
    // Days a project keeps its data (the reference: 0 or at least 3; 0 and NULL keep everything).
    // `retention_applied_at` lets one worker replica claim a project's pass (SKIP LOCKED).
    up: `
ALTER TABLE projects ADD COLUMN IF NOT EXISTS retention_days INTEGER;
ALTER TABLE projects ADD COLUMN IF NOT EXISTS retention_applied_at TIMESTAMPTZ;
ALTER TABLE projects DROP CONSTRAINT IF EXISTS projects_retention_days_check;
ALTER TABLE projects ADD CONSTRAINT projects_retention_days_check
  CHECK (retention_days IS NULL OR retention_days = 0 OR retention_days >= 3);`,
    down: `
ALTER TABLE projects DROP CONSTRAINT IF EXISTS projects_retention_days_check;
ALTER TABLE projects DROP COLUMN IF EXISTS retention_applied_at;
ALTER TABLE projects DROP COLUMN IF EXISTS retention_days;`,
  },
  {
    version: 26,
    name: 'project_invitations',
    bothReleases: true,
    // One-time links that add a person to a project: only the token's SHA-256 is stored (a
    // 256-bit random token, as API secrets), the link itself is shown once to the inviter.
    up: `
CREATE TABLE IF NOT EXISTS project_invitations (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  email TEXT NOT NULL, role TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE,
  invited_by TEXT REFERENCES users(id) ON DELETE SET NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(), expires_at TIMESTAMPTZ NOT NULL, accepted_at TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS project_invitations_project_idx ON project_invitations(project_id, created_at);`,
    down: 'DROP TABLE IF EXISTS project_invitations;',
  },
  {
    version: 27,
    name: 'organization_api_keys',
    bothReleases: true,
    // Organization-scoped keys administer projects and memberships (never read or write a
    // project's data); stored like project keys, the secret as its SHA-256. A deleted project is
    // marked first (its keys and grants gone at once) and removed by the worker with its data.
    up: `
CREATE TABLE IF NOT EXISTS organization_api_keys (
  id TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  public_key TEXT NOT NULL UNIQUE, hashed_secret_key TEXT NOT NULL UNIQUE, display_secret_key TEXT NOT NULL,
  note TEXT, created_at TIMESTAMPTZ NOT NULL DEFAULT now(), last_used_at TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS organization_api_keys_org_idx ON organization_api_keys(org_id);
ALTER TABLE projects ADD COLUMN IF NOT EXISTS metadata JSONB NOT NULL DEFAULT '{}';
ALTER TABLE projects ADD COLUMN IF NOT EXISTS deleted_at TIMESTAMPTZ;`,
    down: `
ALTER TABLE projects DROP COLUMN IF EXISTS deleted_at;
ALTER TABLE projects DROP COLUMN IF EXISTS metadata;
DROP TABLE IF EXISTS organization_api_keys;`,
  },
  {
    version: 28,
    name: 'integrations',
    bothReleases: true,
    // Per-project destinations of the scheduled exports (the reference's blob-storage
    // integrations) and PostHog exports. Secrets are sealed with the server's encryption key;
    // `last_sync_at` is the checkpoint: the end of the last window delivered in full.
    up: `
CREATE TABLE IF NOT EXISTS blob_storage_integrations (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL UNIQUE REFERENCES projects(id) ON DELETE CASCADE,
  type TEXT NOT NULL, bucket_name TEXT NOT NULL, endpoint TEXT, region TEXT NOT NULL,
  access_key_id TEXT, secret_access_key_encrypted TEXT, prefix TEXT NOT NULL DEFAULT '',
  export_frequency TEXT NOT NULL, enabled BOOLEAN NOT NULL, force_path_style BOOLEAN NOT NULL,
  file_type TEXT NOT NULL, export_mode TEXT NOT NULL, export_start_date TIMESTAMPTZ,
  compressed BOOLEAN NOT NULL DEFAULT true, export_source TEXT NOT NULL, export_field_groups JSONB,
  checkpoint TIMESTAMPTZ NOT NULL, last_sync_at TIMESTAMPTZ, last_error TEXT, last_error_at TIMESTAMPTZ,
  ${TIMESTAMPS}
);
CREATE TABLE IF NOT EXISTS posthog_integrations (
  project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  host TEXT NOT NULL, api_key_encrypted TEXT NOT NULL, enabled BOOLEAN NOT NULL,
  checkpoint TIMESTAMPTZ NOT NULL, last_sync_at TIMESTAMPTZ, events_sent BIGINT NOT NULL DEFAULT 0,
  last_error TEXT, last_error_at TIMESTAMPTZ,
  ${TIMESTAMPS}
);`,
    down: `
DROP TABLE IF EXISTS posthog_integrations;
DROP TABLE IF EXISTS blob_storage_integrations;`,
  },
  {
    version: 29,
    name: 'audit_log_users',
    bothReleases: true,
    // A change made from the UI is recorded with the signed-in user who made it (a key's id
    // stays in api_key_id); kept after the user goes, so no foreign key.
    up: 'ALTER TABLE audit_logs ADD COLUMN IF NOT EXISTS user_id TEXT;',
    down: 'ALTER TABLE audit_logs DROP COLUMN IF EXISTS user_id;',
  },
  {
    version: 30,
    name: 'session_details_organization_audit',
    bothReleases: true,
    // A user's sessions are listed and revoked by an id of their own (the token's hash stays
    // internal), with when each was last seen and the client it came from. An organization's
    // changes are audited with its id where no project is concerned.
    up: `
ALTER TABLE user_sessions ADD COLUMN IF NOT EXISTS id TEXT NOT NULL DEFAULT gen_random_uuid()::text,
  ADD COLUMN IF NOT EXISTS last_seen_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  ADD COLUMN IF NOT EXISTS user_agent TEXT, ADD COLUMN IF NOT EXISTS ip TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS user_sessions_id_idx ON user_sessions(id);
ALTER TABLE audit_logs ADD COLUMN IF NOT EXISTS org_id TEXT, ALTER COLUMN project_id DROP NOT NULL;`,
    down: `
DELETE FROM audit_logs WHERE project_id IS NULL;
ALTER TABLE audit_logs DROP COLUMN IF EXISTS org_id, ALTER COLUMN project_id SET NOT NULL;
DROP INDEX IF EXISTS user_sessions_id_idx;
ALTER TABLE user_sessions DROP COLUMN IF EXISTS id, DROP COLUMN IF EXISTS last_seen_at,
  DROP COLUMN IF EXISTS user_agent, DROP COLUMN IF EXISTS ip;`,
  },
  {
    version: 31,
    name: 'ingestion_log',
    bothReleases: true,
    // The ingestion log's queue (server/features/ingestion/log/): one row per file, pending until a drain
    // wrote it to the analytics store. No foreign key: a file outlives its project's removal.
    up: `
CREATE TABLE IF NOT EXISTS ingestion_log (
  key TEXT PRIMARY KEY, project_id TEXT NOT NULL, received_at TIMESTAMPTZ NOT NULL,
  bytes INTEGER NOT NULL, enqueued_at TIMESTAMPTZ NOT NULL DEFAULT now(), lease_until TIMESTAMPTZ,
  attempts INTEGER NOT NULL DEFAULT 0, drained_at TIMESTAMPTZ, last_error TEXT, holder TEXT
);
CREATE INDEX IF NOT EXISTS ingestion_log_pending_idx ON ingestion_log (received_at, key)
  WHERE drained_at IS NULL;
CREATE INDEX IF NOT EXISTS ingestion_log_drained_idx ON ingestion_log (drained_at)
  WHERE drained_at IS NOT NULL;`,
    down: 'DROP TABLE IF EXISTS ingestion_log;',
  },
  {
    version: 32,
    name: 'evaluation_rule_delay',
    bothReleases: true,
    // How long after a row arrives a rule may judge it, in milliseconds (the reference's job
    // configuration `delay`, an Int); existing rules take the reference's default of 10 s.
    up: 'ALTER TABLE evaluation_rules ADD COLUMN IF NOT EXISTS delay INTEGER NOT NULL DEFAULT 10000 CHECK (delay >= 0);',
    down: 'ALTER TABLE evaluation_rules DROP COLUMN IF EXISTS delay;',
  },
  {
    version: 33,
    name: 'job_results',
    bothReleases: true,
    // The result each one-shot command of the operator's Jobs records as it ends, by Job name
    // (server/features/job-results/). On both releases: the preflight runs on a release 3 schema.
    up: `
CREATE TABLE IF NOT EXISTS job_results (
  job TEXT PRIMARY KEY, command TEXT NOT NULL, result TEXT NOT NULL CHECK (result IN ('succeeded', 'failed')),
  detail TEXT NOT NULL, recorded_at TIMESTAMPTZ NOT NULL DEFAULT now()
);`,
    down: 'DROP TABLE IF EXISTS job_results;',
  },
  {
    version: 34,
    name: 'masking_rules',
    bothReleases: true,
    // Each project's masking rules (server/features/masking/): a built-in detector or a custom RE2 pattern,
    // applied to every accepted write before it is stored, on release 3 too.
    up: `
CREATE TABLE IF NOT EXISTS masking_rules (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  name TEXT NOT NULL, detector TEXT NOT NULL, pattern TEXT, replacement TEXT,
  enabled BOOLEAN NOT NULL DEFAULT true, dataset_items BOOLEAN NOT NULL DEFAULT false,
  ${TIMESTAMPS},
  UNIQUE (project_id, name),
  CHECK ((detector = 'custom') = (pattern IS NOT NULL))
);`,
    down: 'DROP TABLE IF EXISTS masking_rules;',
  },
  {
    version: 35,
    name: 'trace_tombstones',
    bothReleases: true,
    // What a deletion deleted (server/features/tombstones/record.ts): a trace of a project, or a whole
    // project (trace_id ''), with when and by whom. No foreign key to projects: a project's
    // tombstone must outlive the project's row. Recorded before the rows go; every later writer
    // (ingestion, its log's drain and replay, propagation, backfill, restores) leaves them out.
    up: `
CREATE TABLE IF NOT EXISTS trace_tombstones (
  project_id TEXT NOT NULL, trace_id TEXT NOT NULL, deleted_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  api_key_id TEXT, user_id TEXT, policy TEXT,
  PRIMARY KEY (project_id, trace_id)
);
CREATE INDEX IF NOT EXISTS trace_tombstones_deleted_at_idx ON trace_tombstones (deleted_at);`,
    down: 'DROP TABLE IF EXISTS trace_tombstones;',
  },
  {
    version: 36,
    name: 'trace_deletions',
    bothReleases: true,
    // Queued trace deletions (server/features/deletion/queue.ts): the request answers once its row commits;
    // the worker deletes `trace_ids` in batches, `done` counting the ids deleted from the front, so
    // a batch cut short by a kill is claimed again (its lease ran out) and repeated, never counted
    // twice. The actor is the caller's, for the audit log. The rows go with their project.
    up: `
CREATE TABLE IF NOT EXISTS trace_deletions (
  id TEXT PRIMARY KEY, ${PROJECT_ID},
  actor JSONB NOT NULL, trace_ids TEXT[] NOT NULL, done INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'succeeded', 'failed')),
  error TEXT, attempts INTEGER NOT NULL DEFAULT 0, holder TEXT, lease_until TIMESTAMPTZ,
  ${TIMESTAMPS},
  finished_at TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS trace_deletions_pending_idx ON trace_deletions (created_at, id)
  WHERE state IN ('queued', 'running');
CREATE INDEX IF NOT EXISTS trace_deletions_project_idx ON trace_deletions (project_id, created_at DESC);`,
    down: 'DROP TABLE IF EXISTS trace_deletions;',
  },
];

export const RELEASE_3_RELATIONAL_VERSION = 4;

export function relationalMigrationsFor(release: '3' | '4'): RelationalMigration[] {
  return release === '3'
    ? RELATIONAL_MIGRATIONS.filter((m) => m.version <= RELEASE_3_RELATIONAL_VERSION || m.bothReleases)
    : RELATIONAL_MIGRATIONS;
}
