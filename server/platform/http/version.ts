/** The version this server reports (health, the OpenAPI document) and signs the UI's own writes with. */
export const SERVICE_VERSION = '4.0.0';
