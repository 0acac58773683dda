// The Go-built tools (helm, kubeconform, the S3 server versitygw) live with the local cluster.
export * from '../../cluster/go-tools.ts';
