export * from '../../cluster/go-tools.ts';
