locals {
  cluster_name                 = "golden-public.example.org"
  master_autoscaling_group_ids = [aws_autoscaling_group.control-plane-a-masters-golden-public-example-org.id]
  master_security_group_ids    = [aws_security_group.masters-golden-public-example-org.id]
  masters_role_arn             = aws_iam_role.masters-golden-public-example-org.arn
  masters_role_name            = aws_iam_role.masters-golden-public-example-org.name
  node_autoscaling_group_ids   = [aws_autoscaling_group.workers-golden-public-example-org.id]
  node_security_group_ids      = [aws_security_group.nodes-golden-public-example-org.id]
  node_subnet_ids              = [aws_subnet.eu-west-9a-golden-public-example-org.id]
  nodes_role_arn               = aws_iam_role.nodes-golden-public-example-org.arn
  nodes_role_name              = aws_iam_role.nodes-golden-public-example-org.name
  region                       = "eu-west-9"
  route_table_public_id        = aws_route_table.golden-public-example-org.id
  subnet_eu-west-9a_id         = aws_subnet.eu-west-9a-golden-public-example-org.id
  vpc_cidr_block               = aws_vpc.golden-public-example-org.cidr_block
  vpc_id                       = aws_vpc.golden-public-example-org.id
  vpc_ipv6_cidr_block          = aws_vpc.golden-public-example-org.ipv6_cidr_block
  vpc_ipv6_cidr_length         = local.vpc_ipv6_cidr_block == "" ? null : tonumber(regex(".*/(\\d+)", local.vpc_ipv6_cidr_block)[0])
}

output "cluster_name" {
  value = "golden-public.example.org"
}

output "master_autoscaling_group_ids" {
  value = [aws_autoscaling_group.control-plane-a-masters-golden-public-example-org.id]
}

output "master_security_group_ids" {
  value = [aws_security_group.masters-golden-public-example-org.id]
}

output "masters_role_arn" {
  value = aws_iam_role.masters-golden-public-example-org.arn
}

output "masters_role_name" {
  value = aws_iam_role.masters-golden-public-example-org.name
}

output "node_autoscaling_group_ids" {
  value = [aws_autoscaling_group.workers-golden-public-example-org.id]
}

output "node_security_group_ids" {
  value = [aws_security_group.nodes-golden-public-example-org.id]
}

output "node_subnet_ids" {
  value = [aws_subnet.eu-west-9a-golden-public-example-org.id]
}

output "nodes_role_arn" {
  value = aws_iam_role.nodes-golden-public-example-org.arn
}

output "nodes_role_name" {
  value = aws_iam_role.nodes-golden-public-example-org.name
}

output "region" {
  value = "eu-west-9"
}

output "route_table_public_id" {
  value = aws_route_table.golden-public-example-org.id
}

output "subnet_eu-west-9a_id" {
  value = aws_subnet.eu-west-9a-golden-public-example-org.id
}

output "vpc_cidr_block" {
  value = aws_vpc.golden-public-example-org.cidr_block
}

output "vpc_id" {
  value = aws_vpc.golden-public-example-org.id
}

output "vpc_ipv6_cidr_block" {
  value = aws_vpc.golden-public-example-org.ipv6_cidr_block
}

output "vpc_ipv6_cidr_length" {
  value = local.vpc_ipv6_cidr_block == "" ? null : tonumber(regex(".*/(\\d+)", local.vpc_ipv6_cidr_block)[0])
}

provider "aws" {
  region = "eu-west-9"
}

provider "aws" {
  alias  = "files"
  region = "eu-west-9"
}

resource "aws_autoscaling_group" "control-plane-a-masters-golden-public-example-org" {
  enabled_metrics = ["GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize", "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances"]
  launch_template {
    id      = aws_launch_template.control-plane-a-masters-golden-public-example-org.id
    version = aws_launch_template.control-plane-a-masters-golden-public-example-org.latest_version
  }
  max_instance_lifetime = 0
  max_size              = 1
  metrics_granularity   = "1Minute"
  min_size              = 1
  name                  = "control-plane-a.masters.golden-public.example.org"
  protect_from_scale_in = false
  tag {
    key                 = "KubernetesCluster"
    propagate_at_launch = true
    value               = "golden-public.example.org"
  }
  tag {
    key                 = "Name"
    propagate_at_launch = true
    value               = "control-plane-a.masters.golden-public.example.org"
  }
  tag {
    key                 = "aws-node-termination-handler/managed"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/role/control-plane"
    propagate_at_launch = true
    value               = "1"
  }
  tag {
    key                 = "k8s.io/role/master"
    propagate_at_launch = true
    value               = "1"
  }
  tag {
    key                 = "kops.k8s.io/instancegroup"
    propagate_at_launch = true
    value               = "control-plane-a"
  }
  tag {
    key                 = "kubernetes.io/cluster/golden-public.example.org"
    propagate_at_launch = true
    value               = "owned"
  }
  tag {
    key                 = "team"
    propagate_at_launch = true
    value               = "platform"
  }
  vpc_zone_identifier = [aws_subnet.eu-west-9a-golden-public-example-org.id]
}

resource "aws_autoscaling_group" "workers-golden-public-example-org" {
  enabled_metrics = ["GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize", "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances"]
  launch_template {
    id      = aws_launch_template.workers-golden-public-example-org.id
    version = aws_launch_template.workers-golden-public-example-org.latest_version
  }
  max_instance_lifetime = 259200
  max_size              = 5
  metrics_granularity   = "1Minute"
  min_size              = 3
  name                  = "workers.golden-public.example.org"
  protect_from_scale_in = false
  tag {
    key                 = "KubernetesCluster"
    propagate_at_launch = true
    value               = "golden-public.example.org"
  }
  tag {
    key                 = "Name"
    propagate_at_launch = true
    value               = "workers.golden-public.example.org"
  }
  tag {
    key                 = "aws-node-termination-handler/managed"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/pool"
    propagate_at_launch = true
    value               = "general"
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/taint/dedicated"
    propagate_at_launch = true
    value               = "general:NoSchedule"
  }
  tag {
    key                 = "k8s.io/role/node"
    propagate_at_launch = true
    value               = "1"
  }
  tag {
    key                 = "kops.k8s.io/instancegroup"
    propagate_at_launch = true
    value               = "workers"
  }
  tag {
    key                 = "kubernetes.io/cluster/golden-public.example.org"
    propagate_at_launch = true
    value               = "owned"
  }
  tag {
    key                 = "team"
    propagate_at_launch = true
    value               = "platform"
  }
  vpc_zone_identifier = [aws_subnet.eu-west-9a-golden-public-example-org.id]
}

resource "aws_autoscaling_lifecycle_hook" "control-plane-a-NTHLifecycleHook" {
  autoscaling_group_name = aws_autoscaling_group.control-plane-a-masters-golden-public-example-org.id
  default_result         = "CONTINUE"
  heartbeat_timeout      = 300
  lifecycle_transition   = "autoscaling:EC2_INSTANCE_TERMINATING"
  name                   = "control-plane-a-NTHLifecycleHook"
}

resource "aws_autoscaling_lifecycle_hook" "workers-NTHLifecycleHook" {
  autoscaling_group_name = aws_autoscaling_group.workers-golden-public-example-org.id
  default_result         = "CONTINUE"
  heartbeat_timeout      = 300
  lifecycle_transition   = "autoscaling:EC2_INSTANCE_TERMINATING"
  name                   = "workers-NTHLifecycleHook"
}

resource "aws_cloudwatch_event_rule" "golden-public-example-org-ASGLifecycle" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-public.example.org-ASGLifecycle_event_pattern")
  name          = "golden-public.example.org-ASGLifecycle"
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "golden-public.example.org-ASGLifecycle"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
}

resource "aws_cloudwatch_event_rule" "golden-public-example-org-InstanceScheduledChange" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-public.example.org-InstanceScheduledChange_event_pattern")
  name          = "golden-public.example.org-InstanceScheduledChange"
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "golden-public.example.org-InstanceScheduledChange"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
}

resource "aws_cloudwatch_event_rule" "golden-public-example-org-InstanceStateChange" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-public.example.org-InstanceStateChange_event_pattern")
  name          = "golden-public.example.org-InstanceStateChange"
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "golden-public.example.org-InstanceStateChange"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
}

resource "aws_cloudwatch_event_rule" "golden-public-example-org-SpotInterruption" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-public.example.org-SpotInterruption_event_pattern")
  name          = "golden-public.example.org-SpotInterruption"
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "golden-public.example.org-SpotInterruption"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
}

resource "aws_cloudwatch_event_target" "golden-public-example-org-ASGLifecycle-Target" {
  arn  = aws_sqs_queue.golden-public-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-public-example-org-ASGLifecycle.id
}

resource "aws_cloudwatch_event_target" "golden-public-example-org-InstanceScheduledChange-Target" {
  arn  = aws_sqs_queue.golden-public-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-public-example-org-InstanceScheduledChange.id
}

resource "aws_cloudwatch_event_target" "golden-public-example-org-InstanceStateChange-Target" {
  arn  = aws_sqs_queue.golden-public-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-public-example-org-InstanceStateChange.id
}

resource "aws_cloudwatch_event_target" "golden-public-example-org-SpotInterruption-Target" {
  arn  = aws_sqs_queue.golden-public-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-public-example-org-SpotInterruption.id
}

resource "aws_ebs_volume" "a-etcd-events-golden-public-example-org" {
  availability_zone = "eu-west-9a"
  encrypted         = false
  iops              = 3000
  size              = 20
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "a.etcd-events.golden-public.example.org"
    "k8s.io/etcd/events"                              = "a/a"
    "k8s.io/role/control-plane"                       = "1"
    "k8s.io/role/master"                              = "1"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
  throughput = 125
  type       = "gp3"
}

resource "aws_ebs_volume" "a-etcd-main-golden-public-example-org" {
  availability_zone = "eu-west-9a"
  encrypted         = false
  iops              = 3000
  size              = 20
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "a.etcd-main.golden-public.example.org"
    "k8s.io/etcd/main"                                = "a/a"
    "k8s.io/role/control-plane"                       = "1"
    "k8s.io/role/master"                              = "1"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
  throughput = 125
  type       = "gp3"
}

resource "aws_iam_instance_profile" "masters-golden-public-example-org" {
  name = "masters.golden-public.example.org"
  role = aws_iam_role.masters-golden-public-example-org.name
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "masters.golden-public.example.org"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
}

resource "aws_iam_instance_profile" "nodes-golden-public-example-org" {
  name = "nodes.golden-public.example.org"
  role = aws_iam_role.nodes-golden-public-example-org.name
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "nodes.golden-public.example.org"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
}

resource "aws_iam_role" "masters-golden-public-example-org" {
  assume_role_policy = file("${path.module}/data/aws_iam_role_masters.golden-public.example.org_policy")
  name               = "masters.golden-public.example.org"
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "masters.golden-public.example.org"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
}

resource "aws_iam_role" "nodes-golden-public-example-org" {
  assume_role_policy = file("${path.module}/data/aws_iam_role_nodes.golden-public.example.org_policy")
  name               = "nodes.golden-public.example.org"
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "nodes.golden-public.example.org"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
}

resource "aws_iam_role_policy" "masters-golden-public-example-org" {
  name   = "masters.golden-public.example.org"
  policy = file("${path.module}/data/aws_iam_role_policy_masters.golden-public.example.org_policy")
  role   = aws_iam_role.masters-golden-public-example-org.name
}

resource "aws_iam_role_policy" "nodes-golden-public-example-org" {
  name   = "nodes.golden-public.example.org"
  policy = file("${path.module}/data/aws_iam_role_policy_nodes.golden-public.example.org_policy")
  role   = aws_iam_role.nodes-golden-public-example-org.name
}

resource "aws_internet_gateway" "golden-public-example-org" {
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "golden-public.example.org"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
  vpc_id = aws_vpc.golden-public-example-org.id
}

resource "aws_key_pair" "kubernetes-golden-public-example-org-9cff2e9ff5238af6b2fba7ae8ada4492" {
  key_name   = "kubernetes.golden-public.example.org-9c:ff:2e:9f:f5:23:8a:f6:b2:fb:a7:ae:8a:da:44:92"
  public_key = file("${path.module}/data/aws_key_pair_kubernetes.golden-public.example.org-9cff2e9ff5238af6b2fba7ae8ada4492_public_key")
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "golden-public.example.org"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
}

resource "aws_launch_template" "control-plane-a-masters-golden-public-example-org" {
  block_device_mappings {
    device_name = "/dev/sda1"
    ebs {
      delete_on_termination = true
      encrypted             = true
      iops                  = 3000
      throughput            = 125
      volume_size           = 64
      volume_type           = "gp3"
    }
  }
  iam_instance_profile {
    name = aws_iam_instance_profile.masters-golden-public-example-org.id
  }
  image_id      = "ami-0000aaaa"
  instance_type = "m5.large"
  key_name      = aws_key_pair.kubernetes-golden-public-example-org-9cff2e9ff5238af6b2fba7ae8ada4492.id
  lifecycle {
    create_before_destroy = true
  }
  metadata_options {
    http_endpoint               = "enabled"
    http_protocol_ipv6          = "disabled"
    http_put_response_hop_limit = 1
    http_tokens                 = "required"
  }
  monitoring {
    enabled = false
  }
  name = "control-plane-a.masters.golden-public.example.org"
  network_interfaces {
    associate_public_ip_address = true
    delete_on_termination       = true
    ipv6_address_count          = 0
    security_groups             = [aws_security_group.masters-golden-public-example-org.id]
  }
  tag_specifications {
    resource_type = "instance"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-public.example.org"
      "Name"                                                                                                  = "control-plane-a.masters.golden-public.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "control-plane-a"
      "kubernetes.io/cluster/golden-public.example.org"                                                       = "owned"
      "team"                                                                                                  = "platform"
    }
  }
  tag_specifications {
    resource_type = "volume"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-public.example.org"
      "Name"                                                                                                  = "control-plane-a.masters.golden-public.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "control-plane-a"
      "kubernetes.io/cluster/golden-public.example.org"                                                       = "owned"
      "team"                                                                                                  = "platform"
    }
  }
  tag_specifications {
    resource_type = "network-interface"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-public.example.org"
      "Name"                                                                                                  = "control-plane-a.masters.golden-public.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "control-plane-a"
      "kubernetes.io/cluster/golden-public.example.org"                                                       = "owned"
      "team"                                                                                                  = "platform"
    }
  }
  tags = {
    "KubernetesCluster"                                                                                     = "golden-public.example.org"
    "Name"                                                                                                  = "control-plane-a.masters.golden-public.example.org"
    "aws-node-termination-handler/managed"                                                                  = ""
    "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
    "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
    "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
    "k8s.io/role/control-plane"                                                                             = "1"
    "k8s.io/role/master"                                                                                    = "1"
    "kops.k8s.io/instancegroup"                                                                             = "control-plane-a"
    "kubernetes.io/cluster/golden-public.example.org"                                                       = "owned"
    "team"                                                                                                  = "platform"
  }
  user_data = filebase64("${path.module}/data/aws_launch_template_control-plane-a.masters.golden-public.example.org_user_data")
}

resource "aws_launch_template" "workers-golden-public-example-org" {
  block_device_mappings {
    device_name = "/dev/sda1"
    ebs {
      delete_on_termination = true
      encrypted             = true
      iops                  = 3000
      throughput            = 125
      volume_size           = 128
      volume_type           = "gp3"
    }
  }
  iam_instance_profile {
    name = aws_iam_instance_profile.nodes-golden-public-example-org.id
  }
  image_id      = "ami-0000aaaa"
  instance_type = "c5.xlarge"
  key_name      = aws_key_pair.kubernetes-golden-public-example-org-9cff2e9ff5238af6b2fba7ae8ada4492.id
  lifecycle {
    create_before_destroy = true
  }
  metadata_options {
    http_endpoint               = "enabled"
    http_protocol_ipv6          = "disabled"
    http_put_response_hop_limit = 1
    http_tokens                 = "required"
  }
  monitoring {
    enabled = false
  }
  name = "workers.golden-public.example.org"
  network_interfaces {
    associate_public_ip_address = true
    delete_on_termination       = true
    ipv6_address_count          = 0
    security_groups             = [aws_security_group.nodes-golden-public-example-org.id]
  }
  tag_specifications {
    resource_type = "instance"
    tags = {
      "KubernetesCluster"                                                          = "golden-public.example.org"
      "Name"                                                                       = "workers.golden-public.example.org"
      "aws-node-termination-handler/managed"                                       = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
      "k8s.io/cluster-autoscaler/node-template/label/pool"                         = "general"
      "k8s.io/cluster-autoscaler/node-template/taint/dedicated"                    = "general:NoSchedule"
      "k8s.io/role/node"                                                           = "1"
      "kops.k8s.io/instancegroup"                                                  = "workers"
      "kubernetes.io/cluster/golden-public.example.org"                            = "owned"
      "team"                                                                       = "platform"
    }
  }
  tag_specifications {
    resource_type = "volume"
    tags = {
      "KubernetesCluster"                                                          = "golden-public.example.org"
      "Name"                                                                       = "workers.golden-public.example.org"
      "aws-node-termination-handler/managed"                                       = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
      "k8s.io/cluster-autoscaler/node-template/label/pool"                         = "general"
      "k8s.io/cluster-autoscaler/node-template/taint/dedicated"                    = "general:NoSchedule"
      "k8s.io/role/node"                                                           = "1"
      "kops.k8s.io/instancegroup"                                                  = "workers"
      "kubernetes.io/cluster/golden-public.example.org"                            = "owned"
      "team"                                                                       = "platform"
    }
  }
  tag_specifications {
    resource_type = "network-interface"
    tags = {
      "KubernetesCluster"                                                          = "golden-public.example.org"
      "Name"                                                                       = "workers.golden-public.example.org"
      "aws-node-termination-handler/managed"                                       = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
      "k8s.io/cluster-autoscaler/node-template/label/pool"                         = "general"
      "k8s.io/cluster-autoscaler/node-template/taint/dedicated"                    = "general:NoSchedule"
      "k8s.io/role/node"                                                           = "1"
      "kops.k8s.io/instancegroup"                                                  = "workers"
      "kubernetes.io/cluster/golden-public.example.org"                            = "owned"
      "team"                                                                       = "platform"
    }
  }
  tags = {
    "KubernetesCluster"                                                          = "golden-public.example.org"
    "Name"                                                                       = "workers.golden-public.example.org"
    "aws-node-termination-handler/managed"                                       = ""
    "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
    "k8s.io/cluster-autoscaler/node-template/label/pool"                         = "general"
    "k8s.io/cluster-autoscaler/node-template/taint/dedicated"                    = "general:NoSchedule"
    "k8s.io/role/node"                                                           = "1"
    "kops.k8s.io/instancegroup"                                                  = "workers"
    "kubernetes.io/cluster/golden-public.example.org"                            = "owned"
    "team"                                                                       = "platform"
  }
  user_data = filebase64("${path.module}/data/aws_launch_template_workers.golden-public.example.org_user_data")
}

resource "aws_route" "route-0-0-0-0--0" {
  destination_cidr_block = "0.0.0.0/0"
  gateway_id             = aws_internet_gateway.golden-public-example-org.id
  route_table_id         = aws_route_table.golden-public-example-org.id
}

resource "aws_route" "route-__--0" {
  destination_ipv6_cidr_block = "::/0"
  gateway_id                  = aws_internet_gateway.golden-public-example-org.id
  route_table_id              = aws_route_table.golden-public-example-org.id
}

resource "aws_route_table" "golden-public-example-org" {
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "golden-public.example.org"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "kubernetes.io/kops/role"                         = "public"
    "team"                                            = "platform"
  }
  vpc_id = aws_vpc.golden-public-example-org.id
}

resource "aws_route_table_association" "eu-west-9a-golden-public-example-org" {
  route_table_id = aws_route_table.golden-public-example-org.id
  subnet_id      = aws_subnet.eu-west-9a-golden-public-example-org.id
}

resource "aws_s3_object" "cluster-completed-spec" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_cluster-completed.spec_content")
  key                    = "golden-public.example.org/cluster-completed.spec"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "etcd-cluster-spec-events" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_etcd-cluster-spec-events_content")
  key                    = "golden-public.example.org/backups/etcd/events/control/etcd-cluster-spec"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "etcd-cluster-spec-main" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_etcd-cluster-spec-main_content")
  key                    = "golden-public.example.org/backups/etcd/main/control/etcd-cluster-spec"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-public-example-org-addons-aws-cloud-controller-addons-k8s-io-k8s-1-18" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-public.example.org-addons-aws-cloud-controller.addons.k8s.io-k8s-1.18_content")
  key                    = "golden-public.example.org/addons/aws-cloud-controller.addons.k8s.io/k8s-1.18.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-public-example-org-addons-aws-ebs-csi-driver-addons-k8s-io-k8s-1-17" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-public.example.org-addons-aws-ebs-csi-driver.addons.k8s.io-k8s-1.17_content")
  key                    = "golden-public.example.org/addons/aws-ebs-csi-driver.addons.k8s.io/k8s-1.17.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-public-example-org-addons-bootstrap" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-public.example.org-addons-bootstrap_content")
  key                    = "golden-public.example.org/addons/bootstrap-channel.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-public-example-org-addons-coredns-addons-k8s-io-k8s-1-12" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-public.example.org-addons-coredns.addons.k8s.io-k8s-1.12_content")
  key                    = "golden-public.example.org/addons/coredns.addons.k8s.io/k8s-1.12.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-public-example-org-addons-dns-controller-addons-k8s-io-k8s-1-12" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-public.example.org-addons-dns-controller.addons.k8s.io-k8s-1.12_content")
  key                    = "golden-public.example.org/addons/dns-controller.addons.k8s.io/k8s-1.12.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-public-example-org-addons-kops-controller-addons-k8s-io-k8s-1-16" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-public.example.org-addons-kops-controller.addons.k8s.io-k8s-1.16_content")
  key                    = "golden-public.example.org/addons/kops-controller.addons.k8s.io/k8s-1.16.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-public-example-org-addons-kubelet-api-rbac-addons-k8s-io-k8s-1-9" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-public.example.org-addons-kubelet-api.rbac.addons.k8s.io-k8s-1.9_content")
  key                    = "golden-public.example.org/addons/kubelet-api.rbac.addons.k8s.io/k8s-1.9.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-public-example-org-addons-limit-range-addons-k8s-io" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-public.example.org-addons-limit-range.addons.k8s.io_content")
  key                    = "golden-public.example.org/addons/limit-range.addons.k8s.io/v1.5.0.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-public-example-org-addons-networking-projectcalico-org-k8s-1-25" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-public.example.org-addons-networking.projectcalico.org-k8s-1.25_content")
  key                    = "golden-public.example.org/addons/networking.projectcalico.org/k8s-1.25.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-public-example-org-addons-node-termination-handler-aws-k8s-1-11" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-public.example.org-addons-node-termination-handler.aws-k8s-1.11_content")
  key                    = "golden-public.example.org/addons/node-termination-handler.aws/k8s-1.11.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-public-example-org-addons-storage-aws-addons-k8s-io-v1-15-0" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-public.example.org-addons-storage-aws.addons.k8s.io-v1.15.0_content")
  key                    = "golden-public.example.org/addons/storage-aws.addons.k8s.io/v1.15.0.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "kops-version-txt" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_kops-version.txt_content")
  key                    = "golden-public.example.org/kops-version.txt"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-channels-kops-channels" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-channels-kops-channels_content")
  key                    = "golden-public.example.org/manifests/channels/kops-channels.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-etcdmanager-events-control-plane-a" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-etcdmanager-events-control-plane-a_content")
  key                    = "golden-public.example.org/manifests/etcd/events-control-plane-a.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-etcdmanager-main-control-plane-a" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-etcdmanager-main-control-plane-a_content")
  key                    = "golden-public.example.org/manifests/etcd/main-control-plane-a.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-static-kube-apiserver-healthcheck" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-static-kube-apiserver-healthcheck_content")
  key                    = "golden-public.example.org/manifests/static/kube-apiserver-healthcheck.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "nodeupconfig-control-plane-a" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_nodeupconfig-control-plane-a_content")
  key                    = "golden-public.example.org/igconfig/control-plane/control-plane-a/nodeupconfig.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "nodeupconfig-workers" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_nodeupconfig-workers_content")
  key                    = "golden-public.example.org/igconfig/node/workers/nodeupconfig.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_security_group" "masters-golden-public-example-org" {
  description = "Security group for masters"
  name        = "masters.golden-public.example.org"
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "masters.golden-public.example.org"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
  vpc_id = aws_vpc.golden-public-example-org.id
}

resource "aws_security_group" "nodes-golden-public-example-org" {
  description = "Security group for nodes"
  name        = "nodes.golden-public.example.org"
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "nodes.golden-public.example.org"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
  vpc_id = aws_vpc.golden-public-example-org.id
}

resource "aws_security_group_rule" "from-10-0-0-0--8-ingress-tcp-443to443-masters-golden-public-example-org" {
  cidr_blocks       = ["10.0.0.0/8"]
  from_port         = 443
  protocol          = "tcp"
  security_group_id = aws_security_group.masters-golden-public-example-org.id
  to_port           = 443
  type              = "ingress"
}

resource "aws_security_group_rule" "from-192-168-0-0--16-ingress-tcp-22to22-masters-golden-public-example-org" {
  cidr_blocks       = ["192.168.0.0/16"]
  from_port         = 22
  protocol          = "tcp"
  security_group_id = aws_security_group.masters-golden-public-example-org.id
  to_port           = 22
  type              = "ingress"
}

resource "aws_security_group_rule" "from-192-168-0-0--16-ingress-tcp-22to22-nodes-golden-public-example-org" {
  cidr_blocks       = ["192.168.0.0/16"]
  from_port         = 22
  protocol          = "tcp"
  security_group_id = aws_security_group.nodes-golden-public-example-org.id
  to_port           = 22
  type              = "ingress"
}

resource "aws_security_group_rule" "from-masters-golden-public-example-org-egress-all-0to0-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 0
  protocol          = "-1"
  security_group_id = aws_security_group.masters-golden-public-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-masters-golden-public-example-org-egress-all-0to0-__--0" {
  from_port         = 0
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "-1"
  security_group_id = aws_security_group.masters-golden-public-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-masters-golden-public-example-org-ingress-all-0to0-masters-golden-public-example-org" {
  from_port                = 0
  protocol                 = "-1"
  security_group_id        = aws_security_group.masters-golden-public-example-org.id
  source_security_group_id = aws_security_group.masters-golden-public-example-org.id
  to_port                  = 0
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-masters-golden-public-example-org-ingress-all-0to0-nodes-golden-public-example-org" {
  from_port                = 0
  protocol                 = "-1"
  security_group_id        = aws_security_group.nodes-golden-public-example-org.id
  source_security_group_id = aws_security_group.masters-golden-public-example-org.id
  to_port                  = 0
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-public-example-org-egress-all-0to0-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 0
  protocol          = "-1"
  security_group_id = aws_security_group.nodes-golden-public-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-nodes-golden-public-example-org-egress-all-0to0-__--0" {
  from_port         = 0
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "-1"
  security_group_id = aws_security_group.nodes-golden-public-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-nodes-golden-public-example-org-ingress-4-0to0-masters-golden-public-example-org" {
  from_port                = 0
  protocol                 = "4"
  security_group_id        = aws_security_group.masters-golden-public-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-public-example-org.id
  to_port                  = 65535
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-public-example-org-ingress-all-0to0-nodes-golden-public-example-org" {
  from_port                = 0
  protocol                 = "-1"
  security_group_id        = aws_security_group.nodes-golden-public-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-public-example-org.id
  to_port                  = 0
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-public-example-org-ingress-tcp-1to2379-masters-golden-public-example-org" {
  from_port                = 1
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-public-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-public-example-org.id
  to_port                  = 2379
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-public-example-org-ingress-tcp-2382to4000-masters-golden-public-example-org" {
  from_port                = 2382
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-public-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-public-example-org.id
  to_port                  = 4000
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-public-example-org-ingress-tcp-4003to65535-masters-golden-public-example-org" {
  from_port                = 4003
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-public-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-public-example-org.id
  to_port                  = 65535
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-public-example-org-ingress-udp-1to65535-masters-golden-public-example-org" {
  from_port                = 1
  protocol                 = "udp"
  security_group_id        = aws_security_group.masters-golden-public-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-public-example-org.id
  to_port                  = 65535
  type                     = "ingress"
}

resource "aws_security_group_rule" "nodeport-tcp-external-to-node-10-1-0-0--16" {
  cidr_blocks       = ["10.1.0.0/16"]
  from_port         = 30000
  protocol          = "tcp"
  security_group_id = aws_security_group.nodes-golden-public-example-org.id
  to_port           = 32767
  type              = "ingress"
}

resource "aws_security_group_rule" "nodeport-udp-external-to-node-10-1-0-0--16" {
  cidr_blocks       = ["10.1.0.0/16"]
  from_port         = 30000
  protocol          = "udp"
  security_group_id = aws_security_group.nodes-golden-public-example-org.id
  to_port           = 32767
  type              = "ingress"
}

resource "aws_sqs_queue" "golden-public-example-org-nth" {
  message_retention_seconds = 300
  name                      = "golden-public-example-org-nth"
  policy                    = file("${path.module}/data/aws_sqs_queue_golden-public-example-org-nth_policy")
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "golden-public-example-org-nth"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
}

resource "aws_subnet" "eu-west-9a-golden-public-example-org" {
  availability_zone                           = "eu-west-9a"
  cidr_block                                  = "10.20.32.0/19"
  enable_resource_name_dns_a_record_on_launch = true
  private_dns_hostname_type_on_launch         = "resource-name"
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "eu-west-9a.golden-public.example.org"
    "SubnetType"                                      = "Public"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "kubernetes.io/role/elb"                          = "1"
    "kubernetes.io/role/internal-elb"                 = "1"
    "team"                                            = "platform"
  }
  vpc_id = aws_vpc.golden-public-example-org.id
}

resource "aws_vpc" "golden-public-example-org" {
  assign_generated_ipv6_cidr_block = true
  cidr_block                       = "10.20.0.0/16"
  enable_dns_hostnames             = true
  enable_dns_support               = true
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "golden-public.example.org"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
}

resource "aws_vpc_dhcp_options" "golden-public-example-org" {
  domain_name         = "eu-west-9.compute.internal"
  domain_name_servers = ["AmazonProvidedDNS"]
  tags = {
    "KubernetesCluster"                               = "golden-public.example.org"
    "Name"                                            = "golden-public.example.org"
    "kubernetes.io/cluster/golden-public.example.org" = "owned"
    "team"                                            = "platform"
  }
}

resource "aws_vpc_dhcp_options_association" "golden-public-example-org" {
  dhcp_options_id = aws_vpc_dhcp_options.golden-public-example-org.id
  vpc_id          = aws_vpc.golden-public-example-org.id
}

terraform {
  required_version = ">= 0.15.0"
  required_providers {
    aws = {
      "configuration_aliases" = [aws.files]
      "source"                = "hashicorp/aws"
      "version"               = ">= 5.0.0"
    }
  }
}
