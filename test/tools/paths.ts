// Where the chart tests find the repository and where built tools are cached (cluster/paths.ts).
export { chartDir, crdDir as crdSourceDir, repoRoot, toolsCache } from '../../cluster/paths.ts';
